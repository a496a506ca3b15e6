/**
 * The envelope (docs/architecture.md, Errors) for errors raised before a route runs: fastify's router failures (a URL
 * that is not valid percent-encoded UTF-8, an over-long path segment), Node's HTTP parser failures
 * (bad framing, oversized headers), a missing Host, and an oversized body announced with
 * `Expect: 100-continue`, refused before the client uploads it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { envelope, invalidInput } from '../errors.js';
import { BODY_LIMIT } from './body.js';
import { bodyTooLarge, sendError } from './errors.js';

export { clientErrorHandler } from './client-errors.js';

/** Fastify's `frameworkErrors` option: router failures answered as envelopes. */
export function frameworkErrors(error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const refusal =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? invalidInput('path', 'A path segment is longer than 200 characters. Check the URL.', 'out_of_range')
      : invalidInput('path', 'The URL is not valid percent-encoded UTF-8. Check the URL.', 'wrong_type');
  const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  sendError(reply, request, refusal.toSpec(), status);
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own refusal has no body, so the check is ours. */
export function installHostCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('connection', 'close');
      return sendError(
        reply,
        request,
        invalidInput('host', 'HTTP/1.1 requests must carry a Host header.', 'wrong_type').toSpec(),
        400,
      );
    }
  });
}

/**
 * `Expect: 100-continue` with a Content-Length over the limit gets its 413 instead of the 100, so
 * the client never uploads a body that would be refused; anything else continues as usual.
 */
export function installEarlyBodyLimit(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > BODY_LIMIT) {
      const body = JSON.stringify(envelope(bodyTooLarge().toSpec(), randomUUID()));
      response.writeHead(413, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
        connection: 'close',
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit('request', request, response);
  });
}
