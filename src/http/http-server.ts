/**
 * The node:http server the service listens with, and the settings it shares with the app
 * (src/http/app.ts). Small on purpose: the process entry (src/start.ts) creates and listens on this
 * server before the app's modules have loaded, then hands it to fastify, so both paths must make
 * the same server (test/unit/http/http-server.test.ts compares them).
 */
import { createServer, type Server } from 'node:http';

/** A client sends its headers in milliseconds; ten seconds covers a slow link and stops a stalled one. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, body included (4 MiB at most), must arrive within this; responses are not bounded by it. */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Connections the kernel may hold completed for the service before it accepts them (capped by the
 * kernel's net.core.somaxconn). Node's default of 511 overflows in a reconnect storm: the kernel then
 * drops the handshake's last packet and the request sent right behind it, and the client's TCP sends
 * the request again only after its retransmission back-off (seconds), so a connection the service
 * accepts later may stay silent long past the header timeout through no fault of the client's.
 */
export const LISTEN_BACKLOG = 8192;
/** How long an idle kept-alive socket stays open (fastify's default, stated so both servers share it). */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/**
 * Node's own refusal of a missing Host has an empty body; installHostCheck (edge-errors.ts) answers
 * with the envelope. Node's header and request timeouts are off: they also expire requests that
 * arrived whole while the event loop was busy. slow-requests.ts times what the client keeps waiting
 * instead.
 */
export const NODE_SERVER_OPTIONS = { requireHostHeader: false, headersTimeout: 0 } as const;
/** A client's own X-Correlation-Id is kept as the request id when it looks like one. */
export const CORRELATION_ID = /^[\x21-\x7e]{1,128}$/;

/** The server fastify would create from app.ts's options, without a request handler yet. */
export function createServiceServer(): Server {
  const server = createServer({ ...NODE_SERVER_OPTIONS });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = 0;
  server.setTimeout(0);
  return server;
}
