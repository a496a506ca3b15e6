/**
 * The log's integration rate (docs/transparency-log.md): receipts sequenced a second by the one
 * integrator holding the log lease. To measure the integrator rather than the writes feeding it,
 * the bench holds the lease itself (its lock key set to a token no process has, so every process's
 * attempt fails and the old holder's fenced writes are refused) while the receipts are written, then
 * lets it go: the rate is the backlog over the time from the published checkpoint's first growth
 * to its covering the whole backlog.
 * The integrator appends up to 2,000 receipts a batch and publishes each, so the backlog must exceed
 * one batch for the time between two checkpoints to be seen; below that, the figure is the backlog
 * over the time from letting go, take-over included (a lower bound).
 *   BENCH_CAPACITY_RECEIPTS (4000: 400 rooms of ten decisions, each sealed by its one member)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { verifyCheckpoint } from '../../src/client/tlog.js';
import { LOG_LEASE_SLUG } from '../../src/store/tlog-port.js';
import { keysOf } from '../../src/store/redis-keys.js';
import { inParallel, KEY_PREFIX } from './deployment.js';
import { apiFor } from '../bench-service.js';
import { type IntegrationRate, ROWS, type Step } from './inputs.js';

const RECEIPTS = Number(process.env.BENCH_CAPACITY_RECEIPTS ?? 4000);
const DECISIONS = 10;
const GIVE_UP_MS = 120_000;
/** Longer than writing the backlog takes on a loaded machine; let go (deleted) as soon as it is written. */
const HOLD_MS = 600_000;

export const measureIntegration: Step<IntegrationRate> = async (deployment) => {
  const { processes } = deployment;
  const base = processes[0]!.base;
  const key = (await apiFor(base)('GET', '/.well-known/svc.json')).audit_log.verifier_key as string;
  const logSize = async () => (await verifyCheckpoint(await (await fetch(`${base}/log/checkpoint`)).text(), key)).size;
  const redis = new Cluster(deployment.cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  const lease = keysOf(KEY_PREFIX).lock(LOG_LEASE_SLUG);
  try {
    await redis.set(lease, 'held by the capacity bench', 'PX', HOLD_MS);
    // A pass already past its lease check finishes (its fenced writes fail after this).
    await sleep(1000);
    const before = await logSize();
    const rooms = Math.ceil(RECEIPTS / DECISIONS);
    await inParallel(rooms, 20, async (r) => {
      const api = apiFor(processes[r % processes.length]!.base);
      const room = await api('POST', '/api/rooms', undefined, {
        question: 'D0?',
        options: ['a', 'b'],
        config: { type: 'persistent', early_close: true, settle_window: 0 },
      });
      for (let d = 0; d < DECISIONS; d++) {
        if (d > 0)
          await api('POST', `/api/rooms/${room.slug}/ask`, room.creator_token, {
            question: `D${d}?`,
            options: ['a', 'b'],
          });
        await api('POST', `/api/rooms/${room.slug}/choose`, room.creator_token, { choice: 'a' });
      }
    });
    const backlog = rooms * DECISIONS;
    if ((await logSize()) !== before) throw new Error('the log grew while the bench held its lease');
    await redis.del(lease);
    const released = performance.now();
    let firstGrowth = 0;
    let sizeAtFirstGrowth = before;
    for (;;) {
      const size = await logSize();
      if (size > before && firstGrowth === 0) {
        firstGrowth = performance.now();
        sizeAtFirstGrowth = size;
      }
      if (size >= before + backlog) break;
      if (performance.now() - released > GIVE_UP_MS) throw new Error(`the log covers ${size - before} of ${backlog}`);
      await sleep(10);
    }
    const covered = performance.now();
    // The first batch landed before firstGrowth could be timed: count only what came after it.
    const after = before + backlog - sizeAtFirstGrowth;
    const sinceRelease = (covered - released) / 1000;
    const receiptsPerSecond = after > 0 ? after / ((covered - firstGrowth) / 1000) : backlog / sinceRelease;
    return {
      figures: { receiptsPerSecond },
      rows: [
        {
          case: `${ROWS.integration}, ${backlog} receipts backlog`,
          rps: Math.round(receiptsPerSecond),
          note:
            after > 0
              ? `receipts sequenced a second after the first published batch (${sizeAtFirstGrowth - before}); all covered ${sinceRelease.toFixed(2)} s after the lease was let go, take-over included`
              : `a lower bound: one batch, covered ${sinceRelease.toFixed(2)} s after the lease was let go, take-over included (raise BENCH_CAPACITY_RECEIPTS above 2000)`,
        },
      ],
    };
  } finally {
    await redis.del(lease).catch(() => undefined);
    redis.disconnect();
  }
};
