/** Helpers of the engagement suites: rooms with seats, and waiting for something that happens over I/O. */
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from './service.js';

export interface SeatedRoom {
  slug: string;
  /** tokens[0] is the creator's. */
  tokens: string[];
  ids: string[];
}

/** A room with `members` seats (the creator first). */
export async function seatedRoom(base: string, body: Record<string, unknown>, members = 2): Promise<SeatedRoom> {
  const created = await call(base, 'POST', '/api/rooms', { body });
  if (created.status !== 200) throw new Error(`room creation failed: ${created.text}`);
  const tokens = [created.body.creator_token as string];
  const ids = [created.body.participant_id as string];
  for (let i = 1; i < members; i++) {
    const joined = await call(base, 'POST', `/api/rooms/${created.body.slug}/join`, {
      body: { display_name: `member-${i}` },
    });
    tokens.push(joined.body.participant_token);
    ids.push(joined.body.participant_id);
  }
  return { slug: created.body.slug, tokens, ids };
}

/**
 * Polls a condition that becomes true through I/O (a request parking, a webhook arriving). Never used
 * to wait for a room's windows: those are driven by the manual clock.
 */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
