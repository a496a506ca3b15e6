/**
 * Node's HTTP parser refusals (bad framing, oversized headers, a request not received in time) as
 * the envelope (docs/architecture.md, Errors), written straight to the socket: no request object
 * exists. Apart from the rest of edge-errors.ts, so the process entry can guard its server with it
 * before the app has loaded (src/start.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { type ErrorSpec, envelope } from '../errors.js';

/** Fastify's `clientErrorHandler`: what Node's parser refused, as an envelope on a closing connection. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, spec] = clientErrorSpec(error.code);
  if (socket.writable) socket.write(rawResponse(status, spec));
  socket.destroy();
}

function clientErrorSpec(code: string | undefined): [number, ErrorSpec] {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, { code: 'input.invalid', message: 'The request headers exceed 16 KiB. Send smaller headers.' }];
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, { code: 'input.invalid', message: 'The request was not received in time. Send it again.' }];
  }
  return [
    400,
    {
      code: 'input.invalid',
      message: 'The request is not well-formed HTTP/1.1 (framing, Content-Length or headers). Send a valid request.',
    },
  ];
}

/** A complete HTTP/1.1 response written straight to a socket, for when no request object exists. */
function rawResponse(status: number, spec: ErrorSpec): string {
  const body = JSON.stringify(envelope(spec, randomUUID()));
  return [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};
