/**
 * The request rate limits of 01 §7 as a fastify onRequest hook: per client IP on every route, per
 * credential on mutating requests. It runs after routing and before room existence and body
 * parsing (check order step 2). A long-poll or SSE request counts once, when it starts. An MCP request
 * carries exactly one JSON-RPC call (batches are refused, mcp/batch.ts), so counting the request here
 * counts each tool call against the per-address limit.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import {
  credentialRateKey,
  type RateDecision,
  type RateLimitSettings,
  type RequestRateCounter,
  rateLimitError,
} from '../auth/rate-limit.js';
import { within } from '../runtime/within.js';
import { sendError } from './errors.js';
import { bearerOf } from './routes.js';

const WINDOW_MS = 60_000;
/** The last resort: a limiter that cannot answer this fast lets the request through (the Redis counters decide locally first, after 50 ms). */
const LIMITER_TIMEOUT_MS = 100;
const MUTATING_METHODS = new Set(['POST', 'PATCH', 'DELETE']);
/** The one state-changing GET (01 §11). */
const MUTATING_GET_ROUTES = new Set(['/api/rooms/:slug/choose']);

export function rateLimitHook(
  counter: RequestRateCounter,
  settings: RateLimitSettings,
  now: () => number,
): onRequestAsyncHookHandler {
  return async function rateLimit(request, reply) {
    const route = request.routeOptions.url;
    // Unknown routes answer 404/405 first (01 §9 step 1); preflights are answered by CORS before this.
    if (route === undefined || request.method === 'OPTIONS') return;
    const at = now();
    try {
      if (settings.ipPerMinute > 0) {
        const decision = await bounded(counter.take(`ip:${request.ip}`, settings.ipPerMinute, WINDOW_MS, at));
        if (!decision.allowed) return tooMany(request, reply, 'ip', settings.ipPerMinute, decision.retryAfterSeconds);
      }
      // MCP carries credentials inside the body (token argument, _meta.mandate): the tool call counts them.
      if (settings.credentialPerMinute > 0 && isMutating(request.method, route) && !route.startsWith('/mcp')) {
        const mandate = request.headers['x-mandate'];
        const credential = credentialRateKey({
          bearer: bearerOf(request),
          mandate: Array.isArray(mandate) ? mandate[0] : mandate,
        });
        if (credential !== null) {
          const decision = await bounded(counter.take(credential, settings.credentialPerMinute, WINDOW_MS, at));
          if (!decision.allowed) {
            return tooMany(request, reply, 'credential', settings.credentialPerMinute, decision.retryAfterSeconds);
          }
        }
      }
    } catch (error) {
      // A limiter whose backing store is down must not take the service down with it.
      request.log.warn({ err: error }, 'rate limiter unavailable; request not limited');
    }
  };
}

function bounded(decision: Promise<RateDecision>): Promise<RateDecision> {
  return within(decision, LIMITER_TIMEOUT_MS, () => {
    throw new Error(`rate limiter did not answer within ${LIMITER_TIMEOUT_MS} ms`);
  });
}

function isMutating(method: string, route: string): boolean {
  return MUTATING_METHODS.has(method) || (method === 'GET' && MUTATING_GET_ROUTES.has(route));
}

function tooMany(
  request: FastifyRequest,
  reply: FastifyReply,
  scope: 'ip' | 'credential',
  limit: number,
  retryAfterSeconds: number,
): FastifyReply {
  const error = rateLimitError(scope, limit, retryAfterSeconds);
  return sendError(reply, request, error.toSpec(), error.status);
}
