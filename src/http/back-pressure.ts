/**
 * Back-pressure in front of every route (@fastify/under-pressure): when the event loop lags, new
 * requests are answered at once with the 503 envelope and Retry-After, so a flood (of long-polls or
 * anything else) degrades into refusals instead of a dead process. Parked long-polls and streams are
 * also capped per process by engagement (MAX_PARKED_CONNECTIONS).
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.js';

/** An event loop this far behind cannot answer anyone in time; refuse new work until it recovers. */
const MAX_EVENT_LOOP_DELAY_MS = 1000;
const RETRY_AFTER_SECONDS = 2;

export async function installBackPressure(app: FastifyInstance): Promise<void> {
  await app.register(underPressure, {
    maxEventLoopDelay: MAX_EVENT_LOOP_DELAY_MS,
    pressureHandler: (request, reply, type) => {
      sendError(
        reply,
        request,
        {
          code: 'vendor:conclave:unavailable',
          message: `The service is overloaded right now (${type}). Retry after the pause in Retry-After.`,
          hint: 'Retry shortly; long-polls that time out normally are the usual way to wait.',
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
        },
        503,
      );
    },
  });
}
