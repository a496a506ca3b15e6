/**
 * A real room that decided and closed, for the verification tests (docs/receipts.md, Verifying):
 * three seats choose in each round (the first round on the room's question, the later ones on
 * "Which office?"), each round sealed by its window on the injected clock, then the room is closed
 * with `statement`. Two such rooms on one service, deciding one question opposite ways, give every
 * forgery genuine receipts to relabel.
 */
import type { ManualClock } from '../../src/runtime/clock.js';
import { seatedRoom } from './engagement.js';
import { call } from './service.js';

export const DECIDED_QUESTION = 'Sell the company?';

export interface DecidedRoom {
  slug: string;
  url: string;
  /** The first seat's token (the room's creator). */
  token: string;
  /** The outcome body as the service serves it (tests edit it). */
  outcome: any;
}

export async function decidedRoom(
  base: string,
  clock: ManualClock,
  choices: string[][],
  statement: string,
): Promise<DecidedRoom> {
  const room = await seatedRoom(
    base,
    { question: DECIDED_QUESTION, options: ['yes', 'no'], config: { voting_window: 60 } },
    3,
  );
  for (const [round, picks] of choices.entries()) {
    if (round > 0) {
      await call(base, 'POST', `/api/rooms/${room.slug}/ask`, {
        token: room.tokens[0],
        body: { question: 'Which office?', options: ['north', 'south'], config: { voting_window: 60 } },
      });
    }
    for (const [i, token] of room.tokens.entries()) {
      await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: picks[i] } });
    }
    clock.advance(61_000);
  }
  await call(base, 'POST', `/api/rooms/${room.slug}/close`, { token: room.tokens[0], body: { statement } });
  const outcome = (await call(base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] })).body;
  return { slug: room.slug, url: `${base}/r/${room.slug}`, token: room.tokens[0]!, outcome };
}
