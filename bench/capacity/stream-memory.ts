/**
 * What a held event stream costs its process in memory: one process of the deployment, its V8 heap
 * in use (its own /metrics) and its RSS (/proc) before and after BENCH_CAPACITY_STREAMS (2000) SSE
 * streams open on one room from the burst client (bench/burst.ts). The baseline is the same
 * process before the streams. The figure is the heap grown per stream, each side the lowest of
 * HEAP_SAMPLES readings over SETTLE_MS: one reading lands anywhere between two collections, so the
 * difference of two single readings swung by tens of MiB either way (once below zero); the lowest of
 * several is the heap just after a collection, what the streams really hold. RSS grows less while
 * the heap has reserved room.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBurst } from '../burst.js';
import { apiFor } from '../bench-service.js';
import { ROWS, type Step, type StreamMemory } from './inputs.js';

const STREAMS = Number(process.env.BENCH_CAPACITY_STREAMS ?? 2000);
/** Long enough for the opening's garbage to be collected before RSS is read. */
const SETTLE_MS = 2000;

const HEAP_SAMPLES = 10;

/** The process's V8 heap in use, from its own /metrics (prom-client's default figures). */
async function heapBytes(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^conclave_nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** The lowest heap reading over SETTLE_MS: the live heap just after a collection. */
async function settledHeapBytes(base: string): Promise<number> {
  let lowest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < HEAP_SAMPLES; i++) {
    await sleep(SETTLE_MS / HEAP_SAMPLES);
    lowest = Math.min(lowest, await heapBytes(base));
  }
  return lowest;
}

function rssBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

export const measureStreamMemory: Step<StreamMemory> = async (deployment) => {
  const target = deployment.processes[0]!;
  const room = await apiFor(target.base)('POST', '/api/rooms', undefined, { about: 'streams' });
  const heapBefore = await settledHeapBytes(target.base);
  const before = rssBytes(target.child.pid!);
  const client = startBurst(
    `${target.base}/api/rooms/${room.slug}/events/stream`,
    'stream',
    `Bearer ${room.creator_token}`,
    STREAMS,
  );
  try {
    const tally = await client.settled();
    const opened = { opened: tally.opened, failed: tally.failed + tally.timedOut };
    const bytesPerStream = ((await settledHeapBytes(target.base)) - heapBefore) / opened.opened;
    const after = rssBytes(target.child.pid!);
    const rssPerStream = (after - before) / opened.opened;
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
    return {
      figures: { bytesPerStream },
      rows: [
        {
          case: `${ROWS.streamMemory} (${opened.opened} held)`,
          note: `${(bytesPerStream / 1024).toFixed(1)} KiB of heap in use a stream (${opened.failed} refused); RSS ${mib(before)} before, ${mib(after)} with them, ${(rssPerStream / 1024).toFixed(1)} KiB a stream`,
        },
      ],
    };
  } finally {
    client.close();
  }
};
