/**
 * A room's mailbox drains as one batch: turns queued together are applied in order, answered each
 * with its own result or refusal, and committed once. Driven through the real registry on the
 * embedded store, with every turn queued in the same tick so the batch is deterministic.
 */
import { ResponseSeal } from '../../../src/runtime/idempotency-seal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoomCommand } from '../../../machines/room.events.js';
import { ProtocolError } from '../../../src/errors.js';
import type { TurnSpec } from '../../../src/runtime/registry.js';
import type { SqliteStore } from '../../../src/store/sqlite-store.js';
import { call, type RunningService, startService } from '../../support/service.js';
import { discuss } from '../../support/turns.js';

let svc: RunningService;
let slug: string;

/** A command the machine has no answer for: outside the protocol, it must fail alone. */
const unanswerable: TurnSpec<unknown> = {
  prepare: () => ({ command: { type: 'NOT_A_COMMAND' } as unknown as RoomCommand }),
  render: () => ({}),
};

beforeAll(async () => {
  svc = await startService();
  const created = await call(svc.base, 'POST', '/api/rooms', {
    body: { question: 'Batch?', options: ['a', 'b'], config: { max_total_deliberation_messages: 5000 } },
  });
  slug = created.body.slug;
});
afterAll(() => svc.stop());

describe('a room mailbox drained as one batch', () => {
  it('applies turns queued together in order, answers each, and commits once', async () => {
    const { registry, store } = svc.service.services;
    const stats = (store as SqliteStore).commitStats;
    const before = { ...stats };
    const specs = [
      discuss('one'),
      discuss('refused', { invalid: true }),
      discuss('two'),
      unanswerable,
      discuss('three'),
    ];
    const outcomes = await Promise.allSettled(specs.map((spec) => registry.execute(slug, spec)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolError);
    expect((outcomes[1] as PromiseRejectedResult).reason.code).toBe('input.invalid');
    expect((outcomes[3] as PromiseRejectedResult).reason).not.toBeInstanceOf(ProtocolError);
    // Each answer reports the head its own events reached.
    const heads = [0, 2, 4].map((i) => (outcomes[i] as PromiseFulfilledResult<any>).value.result.head);
    expect(heads[1]! - heads[0]!).toBe(1);
    expect(heads[2]! - heads[1]!).toBe(1);
    expect(stats.batches - before.batches).toBe(1);

    const state = await registry.read(slug);
    expect(state!.room.speech.recent.map((m) => m.body)).toEqual(['one', 'two', 'three']);
    expect(state!.head).toBe(heads[2]);
  });

  it('replays a repeated idempotency key within the batch, and refuses a reused key with another body', async () => {
    const { registry } = svc.service.services;
    const seal = new ResponseSeal({
      idempotencyKey: 'batch-key',
      credentialScope: 'ip:127.0.0.1',
      operation: 'discuss',
      clientAddress: '127.0.0.1',
    });
    const key = { scope: `${slug}|batch-key`, fingerprint: 'first', seal };
    const outcomes = await Promise.allSettled([
      registry.execute(slug, discuss('once', { idempotency: key })),
      registry.execute(slug, discuss('once', { idempotency: key })),
      registry.execute(slug, discuss('other', { idempotency: { ...key, fingerprint: 'second' } })),
    ]);
    const [first, again, other] = outcomes as [
      PromiseFulfilledResult<any>,
      PromiseFulfilledResult<any>,
      PromiseRejectedResult,
    ];
    expect(first.value.replayed).toBe(false);
    expect(again.value).toEqual({ result: first.value.result, replayed: true });
    expect(other.reason.code).toBe('idempotency.conflict');
    const state = await registry.read(slug);
    expect(state!.room.speech.recent.filter((m) => m.body === 'once')).toHaveLength(1);
    // After the commit the record is in the store: a later turn replays it too.
    const later = await registry.execute(slug, discuss('once', { idempotency: key }));
    expect(later).toEqual({ result: first.value.result, replayed: true });
  });
});
