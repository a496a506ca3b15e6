/**
 * What a held event stream costs its process in memory: one process of the deployment, its V8 heap
 * in use (its own /metrics) and its RSS (/proc) before and after BENCH_CAPACITY_STREAMS (2000) SSE
 * streams open on one room from the burst client (bench/burst.ts). The baseline is the same
 * process before the streams. The figure is the heap grown per stream: an upper bound, since the
 * garbage of opening them may not be collected yet; RSS grows less while the heap has reserved room.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBurst } from '../burst.js';
import { apiFor } from './deployment.js';
import { ROWS, type Step, type StreamMemory } from './inputs.js';

const STREAMS = Number(process.env.BENCH_CAPACITY_STREAMS ?? 2000);
/** Long enough for the opening's garbage to be collected before RSS is read. */
const SETTLE_MS = 2000;

/** The process's V8 heap in use, from its own /metrics (prom-client's default figures). */
async function heapBytes(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^conclave_nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

function rssBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

export const measureStreamMemory: Step<StreamMemory> = async (deployment) => {
  const target = deployment.processes[0]!;
  const room = await apiFor(target.base)('POST', '/api/rooms', undefined, { about: 'streams' });
  await sleep(SETTLE_MS);
  const before = rssBytes(target.child.pid!);
  const heapBefore = await heapBytes(target.base);
  const client = startBurst(
    `${target.base}/api/rooms/${room.slug}/events/stream`,
    'stream',
    `Bearer ${room.creator_token}`,
    STREAMS,
  );
  try {
    const tally = await client.settled();
    const opened = { opened: tally.opened, failed: tally.failed + tally.timedOut };
    await sleep(SETTLE_MS);
    const after = rssBytes(target.child.pid!);
    const bytesPerStream = ((await heapBytes(target.base)) - heapBefore) / opened.opened;
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
