/**
 * A data directory written before webhook consent (test/fixtures/pre-consent, by the code of commit
 * 6aaa413) opens on SQLite migration 8: its subscriptions are kept, disablings get a reason, settled
 * deliveries a settle time and subscriptions their origin; the active subscription is verified once
 * (its receiver answers 2xx) before its pending room event goes on, and settled rows are removed once
 * their retention has passed.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { SETTLED_DELIVERY_RETENTION_MS } from '../../src/engagement/webhook-worker.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/pre-consent');
const SLUG = 'mkr3jwxh7m';
const ALICE = 't_SGMu7TcoqafR6HJ9EN1haNAipKIQiEbpK-pJ2Re7QFc';
const KEPT = '040c5b50-d453-4104-9091-6d55782b54dd';
const REMOVED = 'a60a3e39-c5b7-4ff6-9d3d-23646c3e9719';
const WRITTEN_AT = 1793527202000;
/** The port the fixture's webhooks point at. */
const PORT = 47193;

describe('webhooks stored before consent (SQLite migration 8)', () => {
  const clock = new ManualClock(WRITTEN_AT + 10_000);
  const received: { url: string; body: any }[] = [];
  let receiver: Server;
  let dir: string;
  let svc: RunningService;

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ url: request.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      receiver.once('error', reject);
      receiver.listen(PORT, '127.0.0.1', resolve);
    });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-pre-consent-'));
    await cp(FIXTURE, dir, { recursive: true });
    svc = await startService({ clock, dataDir: dir, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await svc?.stop({ keepData: true });
    await new Promise((resolve) => receiver?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps the subscriptions, gives reasons and settle times, and verifies the active one once', async () => {
    const engagement = svc.service.store.engagement;
    const listed = await call(svc.base, 'GET', `/api/rooms/${SLUG}/webhooks`, { token: ALICE });
    expect(listed.status).toBe(200);
    const byId = new Map(listed.body.webhooks.map((w: any) => [w.id, w]));
    expect(byId.get(REMOVED)).toMatchObject({ disabled_reason: 'unregistered', verified_at: null });
    expect(await engagement.originFull(`http://127.0.0.1:${PORT}`, 1)).toBe(true);
    expect(await engagement.originFull(`http://127.0.0.1:${PORT}`, 2)).toBe(false);

    // The verification delivery first; the pending event only once it is answered.
    await eventually(() => received.length >= 1);
    await svc.service.engagement.webhooks.runDue();
    expect(received[0]!.body.event).toMatchObject({ id: KEPT, seq: 0, event_type: VERIFICATION_EVENT_TYPE });
    expect(received.filter((r) => r.body.event.seq > 0)).toEqual([]);
    const kept = (await engagement.webhooks(SLUG)).find((w) => w.id === KEPT)!;
    expect(kept).toMatchObject({ verified_at: WRITTEN_AT + 10_000, disabled_at: null, refusal_streak: 0 });

    clock.advance(61_000);
    await svc.service.engagement.webhooks.runDue();
    await eventually(() => received.length === 2);
    expect(received[1]!.body.event).toMatchObject({ seq: 3, event_type: 'discussion.posted' });
    expect(received[1]!.body.event.data.body).toBe('pending before');

    const rows = await engagement.deliveries(SLUG, KEPT);
    expect(rows.map((d) => [d.seq, d.status])).toEqual([
      [0, 'delivered'],
      [2, 'delivered'],
      [3, 'delivered'],
    ]);
    // Settled before the migration: counted as settled when it ran (the service's start).
    expect(rows[1]!.settled_at).toBe(WRITTEN_AT + 10_000);

    // The last settled at the current time: a retention later it is still kept, a second after, gone.
    clock.advance(SETTLED_DELIVERY_RETENTION_MS);
    await svc.service.engagement.webhooks.sweep();
    expect((await engagement.deliveries(SLUG, KEPT)).map((d) => d.seq)).toEqual([3]);
    clock.advance(1000);
    await svc.service.engagement.webhooks.sweep();
    expect(await engagement.deliveries(SLUG, KEPT)).toEqual([]);
  });
});
