/**
 * ROOM_RETENTION_DAYS on both stores, driven by the injected clock: a room concluded longer ago than
 * the retention gives back its history and webhooks, and keeps what its receipts need — the outcome
 * answers as before and its chain verifies; open rooms and recently concluded ones are untouched;
 * a deleted room's slug stays reserved.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../src/client/index.js';
import { roomSignedFor } from '../support/signed-room.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { DAY_MS } from '../../src/store/retention.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { withoutLogTiming } from '../support/tlog.js';

const T0 = Date.parse('2026-06-01T10:00:00.000Z');
const redis = await startRedisServer();

const stores: [string, Record<string, string> | null][] = [
  ['sqlite', {}],
  ['redis', redis ? { STORE: 'redis', REDIS_URL: redis.url } : null],
];

afterAll(async () => {
  await redis?.stop();
});

describe.each(stores)('room retention on %s', (_name, storeEnv) => {
  it.skipIf(storeEnv === null)(
    'reclaims concluded rooms past the retention, keeping their receipts verifiable',
    async () => {
      const clock = new ManualClock(T0);
      const svc: RunningService = await startService({
        clock,
        env: { ...storeEnv, ROOM_RETENTION_DAYS: '30', WEBHOOK_ALLOW_PRIVATE: 'true' },
      });
      try {
        const b = svc.base;
        const room = async () => {
          const created = await call(b, 'POST', '/api/rooms', {
            body: { question: 'Keep it?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
          });
          const { slug, creator_token: token } = created.body;
          await call(b, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body: `talk in ${slug}` } });
          await call(b, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'yes' } });
          await svc.service.scheduler.runDue();
          return { slug: slug as string, token: token as string };
        };
        const close = async (r: { slug: string; token: string }) => {
          const closed = await call(b, 'POST', `/api/rooms/${r.slug}/close`, { token: r.token, body: {} });
          expect(closed.status, JSON.stringify(closed.body)).toBe(200);
        };
        const old = await room();
        await call(b, 'POST', `/api/rooms/${old.slug}/webhooks`, {
          token: old.token,
          body: { url: 'http://127.0.0.1:9/h' },
        });
        await close(old);
        const open = await room();
        const deleted = await room();
        await call(b, 'DELETE', `/api/rooms/${deleted.slug}`, {
          token: deleted.token,
          headers: { 'x-confirm-delete': deleted.slug },
        });
        clock.advance(20 * DAY_MS);
        const recent = await room();
        await close(recent);
        const outcomeBefore = (await call(b, 'GET', `/api/rooms/${old.slug}/outcome`, { token: old.token })).body;
        const eventsOf = async (r: { slug: string; token: string }) =>
          (await call(b, 'GET', `/api/rooms/${r.slug}/events?limit=500`, { token: r.token })).body.events as unknown[];
        expect((await eventsOf(old)).length).toBeGreaterThan(3);

        clock.set(T0 + 29 * DAY_MS);
        expect((await svc.service.retention!.runNow()).reclaimed).toEqual([]);
        clock.set(T0 + 31 * DAY_MS);
        const pass = await svc.service.retention!.runNow();
        expect(pass.reclaimed).toEqual([old.slug]);
        expect(pass.events).toBeGreaterThan(3);

        // Reclaimed: the history and the webhooks.
        expect(await eventsOf(old)).toEqual([]);
        const hooks = await call(b, 'GET', `/api/rooms/${old.slug}/webhooks`, { token: old.token });
        expect(hooks.body.webhooks).toEqual([]);
        // Kept: the room, its outcome exactly as before, and a chain that verifies.
        expect((await call(b, 'GET', `/api/rooms/${old.slug}`, { token: old.token })).status).toBe(200);
        const outcomeAfter = (await call(b, 'GET', `/api/rooms/${old.slug}/outcome`, { token: old.token })).body;
        // The log inclusion appears once the integrator has sequenced the receipts (timing, not retention).
        expect(withoutLogTiming(outcomeAfter)).toEqual(withoutLogTiming(outcomeBefore));
        const jwks = (await call(b, 'GET', '/.well-known/jwks.json')).body;
        const report = await verifyRoomReceiptChain(outcomeAfter, { jwks, room: roomSignedFor(outcomeAfter) });
        expect(report.ok, report.errors.join('; ')).toBe(true);
        expect(report.receipts).toHaveLength(2);
        // Untouched: the open room and the one concluded 11 days ago; the deleted slug stays taken.
        expect((await eventsOf(open)).length).toBeGreaterThan(3);
        expect((await eventsOf(recent)).length).toBeGreaterThan(3);
        expect(await svc.service.store.reserveSlug(deleted.slug)).toBe(false);
        // A second pass has nothing left to do.
        expect((await svc.service.retention!.runNow()).reclaimed).toEqual([]);
      } finally {
        await svc.stop();
      }
    },
    60_000,
  );
});
