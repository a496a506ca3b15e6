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
