/**
 * The request rate limits as a fastify onRequest hook, by who is calling
 * (docs/architecture.md, Rate limits by caller): a call with a known credential counts on that
 * credential's budget (and its issuer's), any other call on its client address; mutating requests
 * also count per credential. It runs after routing and before room existence and body parsing (check
 * order step 2). A long-poll or SSE request counts once, when it starts. MCP credentials travel in
 * the body, so the MCP routes are counted by `limitMcpMessage` once the body is read: a request
 * carries exactly one JSON-RPC message (batches are refused, mcp/batch.ts), so each tool call counts.
 */
import type { FastifyBaseLogger, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { type CountedOn, type LimitSettings, limitCall, limitMcpSetup, type Take } from '../auth/caller-limits.js';
import { addressGroup } from '../auth/client-address.js';
import type { KnownCredentials } from '../auth/known-credentials.js';
import { credentialRateKey, RATE_WINDOW_MS, type RequestRateCounter } from '../auth/rate-limit.js';
import type { ProtocolError } from '../errors.js';
import { within } from '../runtime/within.js';
import { sendError } from './errors.js';
import { bearerOf } from './routes.js';

/** The last resort: a limiter that cannot answer this fast lets the request through (the Redis counters decide locally first, after 50 ms). */
const LIMITER_TIMEOUT_MS = 100;
const MUTATING_METHODS = new Set(['POST', 'PATCH', 'DELETE']);
/** The one state-changing GET (docs/agents.md, The REST loop). */
const MUTATING_GET_ROUTES = new Set(['/api/rooms/:slug/choose']);
/** The calls that hand out credentials (creator and participant tokens, a seat for a mandate): always paid by the address. */
const MINTING_ROUTES = new Set(['POST /api/rooms', 'POST /api/rooms/:slug/join']);
const MINTING_TOOLS = new Set(['create_room', 'join_room']);

/** What the limits need: the shared counters, the table of known credentials and the settings. */
export interface CallerRateLimits {
  counter: RequestRateCounter;
  known: KnownCredentials;
  settings: LimitSettings;
}

export function rateLimitHook(limits: CallerRateLimits, now: () => number): onRequestAsyncHookHandler {
  const { counter, settings } = limits;
  return async function rateLimit(request, reply) {
    const route = request.routeOptions.url;
    // Unknown routes answer 404/405 first (docs/architecture.md, Errors); preflights are answered by CORS before this.
    if (route === undefined || request.method === 'OPTIONS') return;
    // MCP carries credentials inside the body: limitMcpMessage counts the call once it is read.
    if (route.startsWith('/mcp')) return;
    const at = now();
    const presented = { bearer: bearerOf(request), mandate: header(request, 'x-mandate') };
    try {
      const refusal = await limitCall(
        settings,
        boundedKnown(limits.known),
        boundedTake(counter, at),
        presented,
        addressGroup(request.ip),
        MINTING_ROUTES.has(`${request.method} ${route}`),
        mutationBudget(settings, presented, isMutating(request.method, route)),
      );
      if (refusal) return sendError(reply, request, refusal.error.toSpec(), refusal.error.status);
    } catch (error) {
      // A limiter whose backing store is down must not take the service down with it.
      request.log.warn({ err: error }, 'rate limiter unavailable; request not limited');
    }
  };
}

/**
 * A mutating call also counts on the per-credential limit (`RATE_LIMIT_CREDENTIAL_PER_MIN`), in the
 * same round trip as its caller's budgets: the budget to add, if any.
 */
function mutationBudget(
  settings: LimitSettings,
  presented: { bearer?: string | undefined; mandate?: string | undefined },
  mutating: boolean,
): CountedOn[] {
  const credential = mutating ? credentialRateKey(presented) : null;
  return credential === null ? [] : [{ key: credential, limit: settings.credentialPerMinute, scope: 'credential' }];
}

/** An MCP message refused; `inTool` when the tool call itself answers it (see limitMcpMessage). */
export interface McpRefusal {
  error: ProtocolError;
  inTool: boolean;
}

/**
 * Counts one MCP message (the JSON-RPC body, parsed once by the MCP route; undefined when it is not
 * JSON): a tool call by the credential in its arguments
 * (`token`) or `_meta.mandate` (else the X-Mandate header), like a REST call, a call of one of
 * `mutatingTools` on the per-credential limit too; any other message (initialize, notifications,
 * tools/list) on the address's MCP setup budget; `address` is the client's exact address, counted by
 * its group (auth/client-address.ts). The refusal, or null. A refusal by the
 * per-credential limit is answered by the tool call, as a tool error (`inTool`), as it always was.
 */
export async function limitMcpMessage(
  limits: CallerRateLimits,
  message: unknown,
  mandateHeader: string | undefined,
  address: string,
  at: number,
  log: FastifyBaseLogger,
  mutatingTools: ReadonlySet<string> = new Set(),
): Promise<McpRefusal | null> {
  const take = boundedTake(limits.counter, at);
  const group = addressGroup(address);
  try {
    const call = toolCallCredentials(message);
    if (call === null) {
      const refusal = await limitMcpSetup(limits.settings, take, group);
      return refusal && { error: refusal.error, inTool: false };
    }
    const { tool, bearer, mandate } = call;
    const presented = { bearer, mandate: mandate ?? mandateHeader };
    const mutation = mutationBudget(limits.settings, presented, mutatingTools.has(tool));
    const refusal = await limitCall(
      limits.settings,
      boundedKnown(limits.known),
      take,
      presented,
      group,
      MINTING_TOOLS.has(tool),
      mutation,
    );
    return refusal && { error: refusal.error, inTool: mutation.includes(refusal.budget) };
  } catch (error) {
    log.warn({ err: error }, 'rate limiter unavailable; request not limited');
    return null;
  }
}

/** The tool and credentials of a `tools/call` message, or null for any other message (or a body that is not one). */
function toolCallCredentials(message: unknown): { tool: string; bearer?: string; mandate?: string } | null {
  if (!isObject(message) || message.method !== 'tools/call') return null;
  const params = isObject(message.params) ? message.params : {};
  const args = isObject(params.arguments) ? params.arguments : {};
  const meta = isObject(params._meta) ? params._meta : {};
  return {
    tool: typeof params.name === 'string' ? params.name : '',
    ...(typeof args.token === 'string' ? { bearer: args.token } : {}),
    ...(typeof meta.mandate === 'string' ? { mandate: meta.mandate } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A lookup that cannot answer in time counts as unknown: the call is then counted on its address.
 * An in-process table cannot hang, and a timer raced against each of its lookups and counts was a
 * measurable share of every request (docs/performance.md, Choose across rooms): it goes unbounded.
 */
function boundedKnown(known: KnownCredentials): KnownCredentials {
  if (known.inProcess) return known;
  return {
    lookup: (key) => within(known.lookup(key), LIMITER_TIMEOUT_MS, () => null),
    remember: (key, proven) => known.remember(key, proven),
    forget: (key) => known.forget(key),
  };
}

function boundedTake(counter: RequestRateCounter, at: number): Take {
  if (counter.inProcess) return (budgets) => counter.takeAll(budgets, RATE_WINDOW_MS, at);
  return (budgets) => bounded(counter.takeAll(budgets, RATE_WINDOW_MS, at));
}

function bounded<T>(decision: Promise<T>): Promise<T> {
  return within(decision, LIMITER_TIMEOUT_MS, () => {
    throw new Error(`rate limiter did not answer within ${LIMITER_TIMEOUT_MS} ms`);
  });
}

function isMutating(method: string, route: string): boolean {
  return MUTATING_METHODS.has(method) || (method === 'GET' && MUTATING_GET_ROUTES.has(route));
}
