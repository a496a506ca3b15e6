/**
 * Back-pressure in front of every route: while the event loop lags, new requests are answered at
 * once with the 503 envelope and Retry-After, so a flood (of long-polls or anything else) degrades
 * into refusals instead of a dead process. Parked long-polls and streams are also capped per process
 * by engagement (MAX_PARKED_CONNECTIONS), and sockets by the connection guard (connection-guard.ts).
 *
 * The lag is measured with perf_hooks' event-loop-delay histogram and nothing else. This replaced
 * `@fastify/under-pressure`, which also sampled `process.memoryUsage()` every second: that call
 * opens /proc/self/stat, throws EMFILE when descriptors run out, and the throw, from a timer, ended
 * the process (docs/architecture.md, Robustness at the edges).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { LOOP_DELAY_RESOLUTION_MS } from '../observability/loop-delay.js';
import { sendError } from './errors.js';

/** An event loop this far behind cannot answer anyone in time; refuse new work until it recovers. */
export const MAX_EVENT_LOOP_DELAY_MS = 1000;
/**
 * How many samples in a row must lag before requests are refused. One long synchronous stretch (a
 * large GC, a big JSON document) lands in a single sample however long it lasts, because the
 * sampler's own timer fires once when the loop comes back; the loop is healthy again by then, and
 * refusing the next second of requests for it would turn one pause into a second of 503s. A loop
 * that is overloaded lags sample after sample.
 */
export const LAGGING_SAMPLES_TO_REFUSE = 2;
const RETRY_AFTER_SECONDS = 2;
const SAMPLE_INTERVAL_MS = 1000;

/** Whether the loop is overloaded, from its mean delay per sample (pure: tests feed it samples). */
export class LoopLagGauge {
  private laggingInARow = 0;

  /** Takes one sample's mean delay beyond the timer's resolution, in milliseconds. */
  record(meanDelayMs: number): void {
    this.laggingInARow = meanDelayMs > MAX_EVENT_LOOP_DELAY_MS ? this.laggingInARow + 1 : 0;
  }

  get overloaded(): boolean {
    return this.laggingInARow >= LAGGING_SAMPLES_TO_REFUSE;
  }
}

export async function installBackPressure(app: FastifyInstance): Promise<void> {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  const gauge = new LoopLagGauge();
  // The histogram is never reset: a reset also forgets when its timer last fired, so the first fire
  // after one records nothing, and a loop whose every turn outlasts the sampling interval (one fire
  // per turn) would record nothing at all. Each sample is the difference of the running totals.
  let seenCount = 0;
  let seenTotalMs = 0;
  const sampler = setInterval(() => {
    const count = histogram.count;
    const totalMs = count > 0 ? (histogram.mean / 1e6) * count : 0;
    const fires = count - seenCount;
    const meanMs = fires > 0 ? (totalMs - seenTotalMs) / fires : 0;
    seenCount = count;
    seenTotalMs = totalMs;
    gauge.record(Math.max(0, meanMs - LOOP_DELAY_RESOLUTION_MS));
  }, SAMPLE_INTERVAL_MS);
  sampler.unref();
  app.addHook('onClose', async () => {
    clearInterval(sampler);
    histogram.disable();
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!gauge.overloaded) return;
    sendError(
      reply,
      request,
      {
        code: 'vendor:conclave:unavailable',
        message: 'The service is overloaded right now (event loop delay). Retry after the pause in Retry-After.',
        hint: 'Retry shortly; long-polls that time out normally are the usual way to wait.',
        headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      },
      503,
    );
    return reply;
  });
}
