/** Helpers for the transparency-log tests: rooms with receipts over real HTTP. */
import { expect } from 'vitest';
import type { ManualClock } from '../../src/runtime/clock.js';
import { call } from './service.js';

/** A room whose one decision is sealed (and, when `close`, the room concluded): one or two receipts. */
export async function roomWithReceipts(
  base: string,
  clock: ManualClock,
  close = false,
): Promise<{ slug: string; token: string }> {
  const room = (
    await call(base, 'POST', '/api/rooms', {
      body: { question: 'Ship it?', options: ['yes', 'no'], config: { voting_window: 60 } },
    })
  ).body;
  const token = room.creator_token as string;
  await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
  clock.advance(61_000);
  await call(base, 'GET', `/api/rooms/${room.slug}/outcome`, { token });
  if (close) {
    const closed = await call(base, 'POST', `/api/rooms/${room.slug}/close`, { token, body: { statement: 'done' } });
    expect(closed.status).toBe(200);
  }
  return { slug: room.slug, token };
}

/** What an outcome says about the transparency log, which depends on when it is read (docs/transparency-log.md, `/outcome`). */
const LOG_TIMING = new Set(['transparency_log', 'log_proofs_pending']);

/** A body without what depends on when the log sequenced its receipts (and, `also`, other keys). */
export function withoutLogTiming(body: unknown, also: readonly string[] = []): unknown {
  return JSON.parse(JSON.stringify(body), (key, value) =>
    LOG_TIMING.has(key) || also.includes(key) ? undefined : value,
  );
}
