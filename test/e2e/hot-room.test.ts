/**
 * A hot room: hundreds of agents choosing in one room at once. Their turns drain in batches; every
 * choice is acknowledged, the decision seals exactly once with every ballot in its receipt, and the
 * chain verifies. (Latency is the bench's business: `npm run bench`, case hot-room.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCompact } from '../../src/receipts/compact.js';
import { runHotRoom } from '../support/hot-room.js';
import { call, type RunningService, startService } from '../support/service.js';

let svc: RunningService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

describe('a hot room', () => {
  it('acknowledges every one of 300 simultaneous choices and seals once, with every ballot', async () => {
    const run = await runHotRoom(svc.base, 300);
    expect(run.acknowledged).toBe(300);
    expect(run.chainErrors).toEqual([]);
    expect(run.chainOk).toBe(true);
    expect(run.receipts).toBe(1);
    const rooms = await call(svc.base, 'GET', `/api/rooms/${run.slug}/outcome`, { token: run.creatorToken });
    const payload = decodeCompact(rooms.body.decisions[0].receipt_jws).payload as any;
    expect(payload.svc.votes).toHaveLength(300);
    expect(payload.svc.outcome.diagnostics).toEqual({ cast_votes: 300, eligible_voters: 300 });
    const events = await call(svc.base, 'GET', `/api/rooms/${run.slug}/events?since_seq=0&limit=1000`, {
      token: run.creatorToken,
    });
    const types = events.body.events.map((e: any) => e.event_type);
    expect(types.filter((t: string) => t === 'vote.cast')).toHaveLength(300);
    expect(types.filter((t: string) => t === 'decision.completed')).toHaveLength(1);
    expect(events.body.events.map((e: any) => e.seq)).toEqual(types.map((_: string, i: number) => i + 1));
  }, 60_000);
});
