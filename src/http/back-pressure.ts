/**
 * Back-pressure in front of every route: when the event loop lags, new requests are answered at once
 * with the 503 envelope and Retry-After, so a flood (of long-polls or anything else) degrades into
 * refusals instead of a dead process. Parked long-polls and streams are also capped per process by
 * engagement (MAX_PARKED_CONNECTIONS), and sockets by the connection guard (connection-guard.ts).
 *
 * The lag is measured with perf_hooks' event-loop-delay histogram and nothing else. This replaced
 * `@fastify/under-pressure`, which also sampled `process.memoryUsage()` every second: that call
 * opens /proc/self/stat, throws EMFILE when descriptors run out, and the throw, from a timer, ended
 * the process (docs/architecture.md, Robustness at the edges).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.js';

/** An event loop this far behind cannot answer anyone in time; refuse new work until it recovers. */
const MAX_EVENT_LOOP_DELAY_MS = 1000;
const RETRY_AFTER_SECONDS = 2;
const SAMPLE_INTERVAL_MS = 1000;
const RESOLUTION_MS = 10;

export async function installBackPressure(app: FastifyInstance): Promise<void> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // The mean delay over the last interval, beyond the sampling resolution itself.
  let delayMs = 0;
  const sampler = setInterval(() => {
    const mean = histogram.mean / 1e6;
    delayMs = Number.isFinite(mean) ? Math.max(0, mean - RESOLUTION_MS) : 0;
    histogram.reset();
  }, SAMPLE_INTERVAL_MS);
  sampler.unref();
  app.addHook('onClose', async () => {
    clearInterval(sampler);
    histogram.disable();
  });
  app.addHook('onRequest', async (request, reply) => {
    if (delayMs <= MAX_EVENT_LOOP_DELAY_MS) return;
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
