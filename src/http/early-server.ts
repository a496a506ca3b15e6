/**
 * The service's server while its modules load (docs/operators.md, Start): created and listening
 * in the first tenth of a second of the process, before fastify, the MCP SDK, zod or the store
 * drivers are loaded (about a second of a cold start), then handed to the app (app.ts, `server`),
 * which serves the same listening socket from then on.
 *
 * Until the handover it answers by itself: liveness (`/healthz`) 200 with the body a healthy
 * process gives, `/readyz` 503 `not_ready` (the same as while the warm-up runs), and every other
 * request 503 `vendor:conclave:unavailable` with Retry-After, as an envelope, or as a page for a
 * browser navigating to one (src/http/negotiate.ts), each with the app's CORS and security headers.
 * It imports only node's modules and the few of the service's that guard a socket (slow-requests.ts,
 * client-errors.ts) or say what the app's answers carry (cors-policy.ts, page-security.ts, whose
 * fastify import is a type's), so the entry stays small: what it imports is what every start waits
 * for before it listens.
 *
 * The handover is one synchronous step between two events: the early request listener is removed
 * and fastify's added in the same turn, so every request is answered by exactly one of them. The
 * slow-request guard is installed here before the first connection and stays; the connection guard
 * adopts the sockets accepted before it existed (app.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ErrorSpec, envelope } from '../errors.js';
import { clientErrorHandler } from './client-errors.js';
import { CORS_POLICY, corsHeaders, crossOrigin } from './cors-policy.js';
import { CORRELATION_ID, createServiceServer, LISTEN_BACKLOG, REQUEST_TIMEOUT_MS } from './http-server.js';
import { wantsPage } from './negotiate.js';
import { securityHeaders } from './page-security.js';
import { installSlowRequestGuard, type SlowRequestTiming } from './slow-requests.js';

export interface EarlyServerSettings {
  port: number;
  host: string;
  headersTimeoutMs: number;
  /** The service version /healthz names. */
  version: string;
}

/** Seconds a client refused while the service starts should wait before it tries again. */
export const STARTING_RETRY_AFTER_SECONDS = 1;

const STARTING: ErrorSpec = {
  code: 'vendor:conclave:unavailable',
  message: 'The service is starting and is not serving requests yet. Retry after the pause in Retry-After.',
  hint: 'Retry shortly; /readyz answers 200 once the service is ready.',
};

/**
 * Alive, and honest about what it has not done yet: no store ping has been answered and no signing
 * key is loaded while the app loads, so both checks say fail and the status degraded (the checks'
 * meanings in meta-openapi.ts, HealthResponse).
 */
const LIVENESS = (version: string) =>
  JSON.stringify({ status: 'degraded', version, checks: { store: 'fail', signing_key: 'fail' } });
const NOT_READY = JSON.stringify({ status: 'not_ready' });

export interface EarlyServer {
  server: Server;
  /** The address it listens on, as a URL (port 0 resolved). */
  url: string;
  /** fastify's `serverFactory`: the app takes this server (app.ts) and keeps its handler for the handover. */
  serverFactory: (handler: RequestListener) => Server;
  /** The slow-request guard: app.close() stops it, and the entry, then the app, log its cuts. */
  timing: SlowRequestTiming;
  /** The sockets accepted so far that are still open. */
  openSockets(): Socket[];
  /** From this turn on, the app answers every request; the early answers stop. */
  handOver(): void;
}

/** Listens with the service's server and answers for it until handOver(); rejects if it cannot listen. */
export async function listenEarly(settings: EarlyServerSettings): Promise<EarlyServer> {
  const server = createServiceServer();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const liveness = LIVENESS(settings.version);
  const answer: RequestListener = (request, response) => answerEarly(request, response, liveness);
  // An Expect: 100-continue head gets the final answer at once; the body is never asked for.
  const continueEarly = (request: IncomingMessage, response: ServerResponse) => answer(request, response);
  // An accept failing (EMFILE) must not end the process before the connection guard is there to shed.
  const acceptFailed = () => undefined;
  server.on('connection', track);
  server.on('request', answer);
  server.on('checkContinue', continueEarly);
  server.on('clientError', clientErrorHandler);
  const timing = installSlowRequestGuard(server, {
    headersTimeoutMs: settings.headersTimeoutMs,
    requestTimeoutMs: Math.max(REQUEST_TIMEOUT_MS, settings.headersTimeoutMs),
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: settings.port, host: settings.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    timing.stop();
    throw error;
  });
  server.on('error', acceptFailed);

  let appHandler: RequestListener | null = null;
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return {
    server,
    url: `http://${host}:${port}`,
    serverFactory(handler) {
      appHandler = handler;
      // From here the app's own handlers take these events (fastify's clientErrorHandler is the same
      // function; edge-errors.ts answers Expect: 100-continue and passes the request on).
      server.off('clientError', clientErrorHandler);
      server.off('checkContinue', continueEarly);
      return server;
    },
    timing,
    openSockets: () => [...sockets],
    handOver() {
      if (appHandler === null) throw new Error('the app has not taken the server (serverFactory)');
      server.off('request', answer);
      // First, as fastify's handler is on a server it creates itself; the guards' listeners follow.
      server.prependListener('request', appHandler);
      server.off('connection', track);
      server.off('error', acceptFailed);
      sockets.clear();
    },
  };
}

/**
 * The answers before the app has loaded: liveness, not ready, a CORS preflight as the app answers it
 * (it depends on the path alone, not on anything still loading: without it a browser would not send
 * the call, and a preflight answered 503 is a CORS failure to the browser), and 503 for the rest.
 * Each carries the CORS and security headers the app's answer would (cors-policy.ts,
 * page-security.ts), so a browser client reads the 503 and its Retry-After.
 */
function answerEarly(request: IncomingMessage, response: ServerResponse, liveness: string): void {
  const given = request.headers['x-correlation-id'];
  const requestId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : randomUUID();
  const url = request.url ?? '/';
  const path = url.split('?')[0]!.replace(/(.)\/+$/, '$1');
  const method = request.method ?? 'GET';
  const read = method === 'GET' || method === 'HEAD';
  const preflight = method === 'OPTIONS';
  response.setHeader('x-correlation-id', requestId);
  for (const [name, value] of corsHeaders(url, preflight)) response.setHeader(name, value);
  if (preflight && crossOrigin(url)) {
    response.writeHead(CORS_POLICY.optionsSuccessStatus, { 'content-length': 0, ...securityHeaderObject(undefined) });
    response.end();
    return;
  }
  response.setHeader('cache-control', 'no-store');
  if (read && path === '/healthz') {
    send(response, 200, 'application/json; charset=utf-8', liveness);
  } else if (read && path === '/readyz') {
    send(response, 503, 'application/json; charset=utf-8', NOT_READY);
  } else {
    response.setHeader('retry-after', String(STARTING_RETRY_AFTER_SECONDS));
    // The answer depends on Accept (a page for a browser), as the app's error answers (errors.ts).
    response.setHeader('vary', `${response.getHeader('vary')}, Accept`);
    if (wantsPage(request)) {
      send(response, 503, 'text/html; charset=utf-8', startingPage(requestId));
    } else {
      send(response, 503, 'application/json; charset=utf-8', JSON.stringify(envelope(STARTING, requestId)));
    }
  }
}

function securityHeaderObject(contentType: string | undefined): Record<string, string> {
  return Object.fromEntries(securityHeaders(contentType));
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    ...securityHeaderObject(type),
  });
  response.end(body);
}

/** A page that reloads itself: the pages' styles are not served yet either. */
function startingPage(requestId: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${STARTING_RETRY_AFTER_SECONDS + 1}"><title>Starting — Conclave</title></head>
<body><header><h1>The service is starting</h1></header>
<main id="main" class="error-page">
<p class="lead" id="error-message">${STARTING.message}</p>
<p>This page reloads by itself in a moment.</p>
<p><small>Code <code>${STARTING.code}</code> · request <code>${requestId.replace(/[<>&"']/g, '')}</code></small></p>
</main></body></html>
`;
}
