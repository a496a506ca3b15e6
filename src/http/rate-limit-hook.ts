/**
 * The request rate limits of 01 §7 as a fastify onRequest hook: per client IP on every route, per
 * credential on mutating requests. It runs after routing and before room existence and body
 * parsing (check order step 2). A long-poll or SSE request counts once, when it starts.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { RateLimitSettings, RequestRateCounter } from '../auth/rate-limit.js';
import { decodeCompact } from '../receipts/index.js';
import { sendError } from './errors.js';
import { bearerOf } from './routes.js';

const WINDOW_MS = 60_000;
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
        const decision = await counter.take(`ip:${request.ip}`, settings.ipPerMinute, WINDOW_MS, at);
        if (!decision.allowed) return tooMany(request, reply, 'ip', settings.ipPerMinute, decision.retryAfterSeconds);
      }
      if (settings.credentialPerMinute > 0 && isMutating(request.method, route)) {
        const credential = credentialKey(request);
        if (credential !== null) {
          const decision = await counter.take(`cred:${credential}`, settings.credentialPerMinute, WINDOW_MS, at);
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

function isMutating(method: string, route: string): boolean {
  return MUTATING_METHODS.has(method) || (method === 'GET' && MUTATING_GET_ROUTES.has(route));
}

/**
 * SHA-256 of the bearer credential, or the mandate's jti when one is presented (the mandate path
 * wins, 01 §3 rule 7). The jti is bound to the token's signature because receipts publish it
 * (`mandate_ref`): a forged token reusing someone's jti gets a bucket of its own instead of
 * draining theirs.
 */
export function credentialKey(request: FastifyRequest): string | null {
  const mandate = request.headers['x-mandate'];
  const presented = Array.isArray(mandate) ? mandate[0] : mandate;
  if (presented) {
    let material = presented;
    try {
      const { payload } = decodeCompact(presented);
      if (typeof payload.jti === 'string')
        material = `${payload.jti}\n${presented.slice(presented.lastIndexOf('.') + 1)}`;
    } catch {
      // an unparsable mandate is counted by its whole text
    }
    return `mandate:${sha256(material)}`;
  }
  const bearer = bearerOf(request);
  return bearer ? `bearer:${sha256(bearer)}` : null;
}

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function tooMany(
  request: FastifyRequest,
  reply: FastifyReply,
  scope: 'ip' | 'credential',
  limit: number,
  retryAfterSeconds: number,
): FastifyReply {
  const who = scope === 'ip' ? 'this client address' : 'this credential';
  const what = scope === 'ip' ? 'requests' : 'mutating requests';
  return sendError(
    reply,
    request,
    {
      code: 'rate_limit.exceeded',
      message: `Too many requests: ${who} may make ${limit} ${what} per minute. Retry after ${retryAfterSeconds} s.`,
      hint: `Wait ${retryAfterSeconds} s (Retry-After) before the next request.`,
      details: { scope, limit, window_seconds: WINDOW_MS / 1000, retry_after_seconds: retryAfterSeconds },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
    429,
  );
}
