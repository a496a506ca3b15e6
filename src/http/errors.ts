/**
 * Every non-2xx REST answer is the protocol's error envelope (docs/architecture.md, Errors): protocol
 * errors, fastify's own failures (body too large, bad content type), unknown routes and 405s.
 */
import { noteErrorCode } from '../observability/error-codes.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorSpec, envelope, ProtocolError, protocolError } from '../errors.js';
import { StoreUnavailableError } from '../store/port.js';
import { isRedisUnavailable } from '../store/redis-errors.js';
import { errorPageHtml } from './error-page.js';
import { wantsPage } from './negotiate.js';

export function sendError(reply: FastifyReply, request: FastifyRequest, spec: ErrorSpec, status: number): FastifyReply {
  noteErrorCode(reply, spec.code);
  for (const [name, value] of Object.entries(spec.headers ?? {})) reply.header(name, value);
  // The answer depends on Accept (a browser gets a page); keep any Vary already set (CORS's Origin).
  const vary = reply.getHeader('vary');
  if (
    !String(vary ?? '')
      .toLowerCase()
      .includes('accept')
  )
    reply.header('vary', vary ? `${vary}, Accept` : 'Accept');
  if (wantsPage(request)) {
    return reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(errorPageHtml(spec, status, request.id));
  }
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(envelope(spec, request.id)));
}

/** docs/architecture.md, Errors: bodies over 4 MiB are refused with 413 and the code input.invalid. */
export function bodyTooLarge(): ProtocolError {
  return protocolError('input.invalid', 'The request body is larger than the 4 MiB limit. Send a smaller body.', {
    status: 413,
    details: { reason: 'out_of_range', field: 'body' },
  });
}

/**
 * Whether a failure is the store being unavailable: mapped by the store, or a Redis error that
 * reached this far unmapped (a Cluster failover's MOVED, CLUSTERDOWN, a connection reset;
 * store/redis-errors.ts). Either is a 503 with Retry-After, never a 500.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof StoreUnavailableError || isRedisUnavailable(error);
}

export function toProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (isStoreUnavailable(error)) {
    return protocolError(
      'vendor:conclave:unavailable',
      "The service's store is unavailable right now; retry shortly.",
      {
        hint: 'Retry with the same Idempotency-Key after a short pause.',
        headers: { 'retry-after': '1' },
      },
    );
  }
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return protocolError(
        'input.invalid',
        'Request bodies must be JSON: send Content-Type: application/json with a JSON object.',
        {
          details: { reason: 'wrong_type', field: 'content-type' },
        },
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return protocolError('input.invalid', 'The request body is not valid JSON. Send a JSON object.', {
        details: { reason: 'wrong_type', field: 'body' },
      });
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return protocolError('input.invalid', `The request could not be read: ${fastifyError.message}`, {
      details: { reason: 'wrong_type' },
    });
  }
  return protocolError(
    'internal.error',
    'An unexpected error occurred on the server. It has been logged; retry, and report it if it persists.',
  );
}

/** How long the rest of a refused upload is read and discarded, so the client can read its 413. */
const DRAIN_MS = 5000;

/**
 * A client still uploading when its 413 is sent sees EPIPE instead of the answer if the socket closes
 * at once, so the connection stays open while Node reads and discards the rest of the request; an
 * upload still unfinished after DRAIN_MS has its connection closed.
 */
function closeAfterDraining(request: FastifyRequest, reply: FastifyReply): void {
  // fastify marks a body-parser failure `Connection: close`, which closes the socket under the upload.
  reply.removeHeader('connection');
  reply.raw.once('finish', () => {
    setTimeout(() => {
      if (!request.raw.complete) request.raw.socket?.destroy();
    }, DRAIN_MS).unref();
  });
}

/**
 * How a refused call is logged: one info line naming the code, never the error object (a 4xx is the
 * client's mistake or an attack, and its stack says nothing about the service; a flood of refusals
 * must stay one short line each). The message is left out too: it can repeat what the client sent.
 * Failures (5xx) are logged by the callers with their stack.
 */
export function logRefusal(
  log: { info(details: Record<string, unknown>, message: string): void },
  refusal: ProtocolError,
  context: Record<string, unknown> = {},
): void {
  log.info({ ...context, error_code: refusal.code, status: refusal.status }, 'request refused');
}

export function installErrorHandling(app: FastifyInstance, allowedMethods: (path: string) => string[]): void {
  app.setErrorHandler((error, request, reply) => {
    const protocol = toProtocolError(error);
    if (isStoreUnavailable(error))
      request.log.warn({ err: error, error_code: protocol.code, status: protocol.status }, 'store unavailable');
    else if (protocol.status >= 500)
      request.log.error({ err: error, error_code: protocol.code, status: protocol.status }, 'request failed');
    else logRefusal(request.log, protocol);
    if (protocol.status === 413) closeAfterDraining(request, reply);
    return sendError(reply, request, protocol.toSpec(), protocol.status);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        reply,
        request,
        {
          code: 'vendor:conclave:method_not_allowed',
          message: `${request.method} is not allowed on ${path}. Allowed: ${allowed.join(', ')}.`,
          details: { allowed },
        },
        405,
      );
    }
    return sendError(
      reply,
      request,
      {
        code: 'vendor:conclave:not_found',
        message: `There is no route ${request.method} ${path}. See the API description at /v1/openapi.json.`,
        details: { path },
      },
      404,
    );
  });
}
