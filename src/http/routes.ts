/**
 * REST routes generated from the operation table. Each route: room existence first (for room paths),
 * then body parsing, then the operation's zod input, then the handler (the check order of docs/architecture.md, Errors). The
 * transport adds nothing of its own beyond reading credentials and headers.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidInput } from '../errors.js';
import { IDEMPOTENCY_KEY, parseOperationInput } from '../operations/input.js';
import type { Services } from '../operations/services.js';
import type { AnyOperation, RequestContext } from '../operations/types.js';
import { roomNotFound } from '../runtime/registry.js';
import { type SharedJson, sharedJson } from '../runtime/shared-answer.js';
import { unreadableBody } from './body.js';
import { securityHeaders } from './page-security.js';
import { runOperation } from '../operations/run.js';

const CREDENTIAL_QUERY_KEYS = ['token', 'access_token', 'mandate', 'password', 'invite'];

export function fastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function bearerOf(request: FastifyRequest): string | undefined {
  const value = header(request, 'authorization');
  if (!value) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(value.trim());
  return match ? match[1]!.trim() : undefined;
}

export function requestContext(
  services: Services,
  request: FastifyRequest,
  operationScope: string,
  fingerprintSource: unknown,
): RequestContext {
  return {
    services,
    credentials: {
      bearer: bearerOf(request),
      mandate: header(request, 'x-mandate'),
      password: header(request, 'x-room-password'),
    },
    idempotencyKey: header(request, 'idempotency-key'),
    requestId: request.id,
    clientIp: request.ip,
    transport: 'rest',
    operationScope,
    fingerprintSource,
    headers: { 'x-confirm-delete': header(request, 'x-confirm-delete') },
    replayed: false,
    responseHeaders: {},
  };
}

export function refuseCredentialsInUrl(query: Record<string, unknown>): void {
  const key = CREDENTIAL_QUERY_KEYS.find((k) => k in query);
  if (key) {
    throw invalidInput(
      key,
      `Credentials never travel in URLs: move "${key}" out of the query string. Tokens go in Authorization: Bearer, mandates in X-Mandate, passwords in X-Room-Password or the join body, invites in the join body.`,
      'credential_in_url',
    );
  }
}

export function registerOperationRoutes(
  app: FastifyInstance,
  services: Services,
  operations: readonly AnyOperation[],
): void {
  for (const operation of operations) {
    if (operation.mcpOnly) continue;
    app.route({
      method: operation.method,
      url: fastifyPath(operation.path),
      // HEAD is safe by definition: the one GET that acts (a ballot by query string) gets no HEAD twin,
      // so a HEAD there is refused 405 instead of casting the ballot (docs/concepts.md, Decisions and slates).
      exposeHeadRoute: !(operation.method === 'GET' && operation.mutating),
      handler: async (request, reply) => handle(services, operation, request, reply),
    });
  }
}

async function handle(services: Services, operation: AnyOperation, request: FastifyRequest, reply: FastifyReply) {
  const params = (request.params ?? {}) as Record<string, string>;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const path = request.url.split('?')[0]!;
  refuseCredentialsInUrl(query);
  if (params.slug !== undefined && !(await services.registry.exists(params.slug))) throw roomNotFound(params.slug);

  const body = request.body as unknown;
  const usesBody = operation.inputSource === 'body';
  const unreadable = usesBody ? unreadableBody(body) : null;
  if (unreadable) throw unreadable;
  if (usesBody && body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw invalidInput('body', 'The request body must be a JSON object.', 'wrong_type');
  }
  const fields = usesBody
    ? ((body as Record<string, unknown> | undefined) ?? {})
    : operation.inputSource === 'query'
      ? query
      : {};

  refuseContradictedPath(fields, params, operation);

  const idempotencyKey = header(request, 'idempotency-key');
  if (operation.mutating && idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw invalidInput('Idempotency-Key', 'Idempotency-Key must be 1..255 visible ASCII characters.', 'invalid_value');
  }

  const { input, invalid } = parseOperationInput(operation, { ...fields, ...params });
  const ctx = requestContext(services, request, `${request.method} ${path}`, usesBody ? (body ?? {}) : query);
  watchClientGone(ctx, reply);
  if (request.method === 'GET') ctx.answerWoken = (answer) => answerWoken(operation, ctx, reply, answer);
  const result = await runOperation(operation, ctx, input, invalid);
  // Already written from inside its wake (answerWoken).
  if (reply.sent) return reply;
  // A shared answer (a long-poll wake) was serialized once for all its callers.
  const shared = sharedJson(result);
  if (shared !== undefined && request.method === 'GET') return sendShared(operation, ctx, reply, shared);
  answerHeaders(operation, ctx, (name, value) => reply.header(name, value));
  return reply.send(shared?.bytes ?? JSON.stringify(result));
}

/** The headers the route adds to an operation's answer, each through `set`. */
function answerHeaders(
  operation: AnyOperation,
  ctx: RequestContext,
  set: (name: string, value: string) => unknown,
): void {
  if (ctx.replayed) set('idempotent-replayed', 'true');
  for (const [name, value] of Object.entries(ctx.responseHeaders)) set(name, value);
  if (operation.noStore) set('cache-control', 'no-store');
  set('content-type', 'application/json; charset=utf-8');
}

/**
 * A long-poll's answer, written from inside the evaluation pass that woke it (engagement/waiters.ts):
 * the pass writes every answer it wakes in one go, and each waiter's promise chain, run afterwards,
 * finds its reply sent. Never throws into the pass: an answer that cannot be written ends its response.
 */
function answerWoken(
  operation: AnyOperation,
  ctx: RequestContext,
  reply: FastifyReply,
  answer: Record<string, unknown>,
): void {
  const shared = sharedJson(answer);
  if (reply.sent || shared === undefined) return;
  try {
    sendShared(operation, ctx, reply, shared);
  } catch (error) {
    reply.log.error({ err: error }, 'a woken long-poll could not be answered');
    reply.raw.destroy();
  }
}

/**
 * Writes a shared answer (the long-polls one commit wakes, engagement/long-poll.ts) with the same
 * status, headers and body fastify's send path would, without that path (docs/performance.md, One
 * commit, ten thousand long-polls): the headers the hooks and the handler set on the reply, the
 * route's own (answerHeaders), the security headers page-security.ts's onSend hook adds, the prepared
 * Content-Length, in that order, set on the header object Node writes as fastify's reply.header would.
 * What fastify does when the response finishes still runs (the onResponse hooks: metrics; the access
 * log), as do the server's own listeners (the slow-request and connection guards). The test
 * test/e2e/long-poll-shared-wake.test.ts holds every woken answer to the one the normal path gives.
 * HEAD, whose body fastify's HEAD route drops, keeps the normal path.
 */
function sendShared(operation: AnyOperation, ctx: RequestContext, reply: FastifyReply, json: SharedJson): FastifyReply {
  reply.hijack();
  // The reply holds header values as fastify was given them; Node writes each as `${value}`.
  const headers = reply.getHeaders() as OutgoingHttpHeaders;
  answerHeaders(operation, ctx, (name, value) => {
    headers[name.toLowerCase()] = value;
  });
  for (const [name, value] of securityHeaders(headers['content-type'])) headers[name] = value;
  headers['content-length'] = json.length;
  reply.raw.writeHead(reply.statusCode, headers);
  reply.raw.end(json.bytes);
  return reply;
}

/**
 * Path parameters live only in the path (the OpenAPI document says so). A body or query field of the
 * same name is redundant when it agrees, and refused when it names something else: the path would
 * otherwise silently win over what the caller meant.
 */
function refuseContradictedPath(
  fields: Record<string, unknown>,
  params: Record<string, string>,
  operation: AnyOperation,
): void {
  for (const [name, value] of Object.entries(params)) {
    if (!(name in fields) || fields[name] === value) continue;
    throw invalidInput(
      name,
      `The field "${name}" contradicts the path, which names ${JSON.stringify(value)}: ${name} belongs in the path only; drop it from the ${operation.inputSource === 'query' ? 'query string' : 'body'} (${operation.method} ${operation.path}).`,
      'invalid_value',
    );
  }
}

/**
 * `ctx.signal` aborts when the client closes the connection before its response is complete. Made
 * on first read: only a parked wait reads it, and an AbortController plus a 'close' listener on
 * every request was a measurable share of a choose (docs/performance.md, Choose across rooms). A
 * connection already gone when it is first read gives an aborted signal.
 */
function watchClientGone(ctx: RequestContext, reply: FastifyReply): void {
  let signal: AbortSignal | undefined;
  Object.defineProperty(ctx, 'signal', {
    configurable: true,
    enumerable: true,
    get(): AbortSignal {
      if (signal) return signal;
      const response = reply.raw;
      if (response.destroyed) {
        signal = response.writableFinished ? new AbortController().signal : AbortSignal.abort();
        return signal;
      }
      const controller = new AbortController();
      response.once('close', () => {
        if (!response.writableFinished) controller.abort();
      });
      signal = controller.signal;
      return signal;
    },
  });
}
