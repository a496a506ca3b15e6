/**
 * The fastify app, composed in a fixed order: infrastructure (logging, correlation ids, CORS, body
 * parsing, error envelope) → routes generated from the operation table → meta routes and pages.
 * Routes only validate and delegate; everything else lives in operations/.
 */
import { serializeReply } from '../observability/error-codes.js';
import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type onRequestAsyncHookHandler } from 'fastify';
import type { Revocation } from '../auth/identity-store.js';
import type { Services } from '../operations/services.js';
import type { AnyOperation } from '../operations/types.js';
import { installBackPressure } from './back-pressure.js';
import { installConnectionGuard } from './connection-guard.js';
import { CORS_POLICY, crossOrigin } from './cors-policy.js';
import { installSlowRequestGuard, slowRequestLogFields } from './slow-requests.js';
import {
  CORRELATION_ID,
  DEFAULT_HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  NODE_SERVER_OPTIONS,
  REQUEST_TIMEOUT_MS,
} from './http-server.js';
import type { EarlyServer } from './early-server.js';
import { BODY_LIMIT, installBodyParsing } from './body.js';
import { BodyBudget, DEFAULT_BODY_BYTES_IN_FLIGHT, installBodyBudget } from './body-budget.js';
import { clientErrorHandler, frameworkErrors, installEarlyBodyLimit, installHostCheck } from './edge-errors.js';
import { installErrorHandling } from './errors.js';
import { serializeRequest } from './log-redaction.js';
import { EVENT_STREAM_PATH } from './event-stream-route.js';
import { type Capabilities, registerMetaRoutes } from './meta.js';
import { OAUTH_ROUTES } from './oauth-routes.js';
import { registerPageAssets } from './page-assets.js';
import { installPageSecurity } from './page-security.js';
import { registerDocsPage } from './docs-page.js';
import { registerGuidePages } from './guide-page.js';
import { registerHomePage } from './home-page.js';
import { registerRoomPage } from './room-page.js';
import { registerVisualizerPage } from './visualizer-page.js';
import { registerOperationRoutes } from './routes.js';
import { installMetrics } from './metrics-route.js';
import type { ServiceMetrics } from '../observability/metrics.js';

export interface HttpOptions {
  logLevel: string;
  capabilities: Capabilities;
  /** Extra routes mounted by other transports (MCP) and engagement, after the core routes. */
  extensions?: ((app: FastifyInstance) => void | Promise<void>)[];
  /** Request hooks every route passes after CORS and before its handler (the rate limits; docs/operators.md, Configuration). */
  onRequest?: onRequestAsyncHookHandler[];
  /** The service's own mandate revocations, listed by discovery. */
  revocations?: () => Promise<Revocation[]>;
  /** Prometheus metrics: every response is counted, and `GET /metrics` serves them. */
  metrics?: ServiceMetrics;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (rate limits, logs): fastify's
   * trustProxy — true, or the proxies' addresses/CIDRs. Off unless the service sits behind one.
   */
  trustProxy?: true | string[] | undefined;
  /** Socket limits: the per-address cap (undefined = derived from the descriptor limit) and the header timeout. */
  sockets?: { maxPerAddress?: number | undefined; headersTimeoutMs?: number; bodyBytesInFlight?: number };
  /**
   * A server already listening (src/start.ts): fastify takes it instead of creating one, and app.ts
   * serves it once the caller hands it over (EarlyServer.handOver). Its slow-request guard is already
   * timing it; the connection guard counts the sockets it accepted before.
   */
  server?: EarlyServer;
}

export { LISTEN_BACKLOG } from './http-server.js';

const META_PATHS = [
  '/.well-known/svc.json',
  '/.well-known/jwks.json',
  '/healthz',
  '/readyz',
  '/v1/openapi.json',
  '/r/{slug}',
  '/',
  '/docs',
  '/guide',
  '/guide/{file}',
  '/favicon.ico',
  '/robots.txt',
  EVENT_STREAM_PATH,
];

function routeMatcher(operations: readonly AnyOperation[]): (path: string) => string[] {
  const table = [
    ...operations.filter((op) => !op.mcpOnly).map((op) => ({ path: op.path, method: op.method })),
    ...META_PATHS.map((path) => ({ path, method: 'GET' })),
    { path: '/mcp', method: 'POST' },
    { path: '/mcp/host', method: 'POST' },
    ...OAUTH_ROUTES,
  ].map((r) => ({ ...r, pattern: new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`) }));
  return (path) => [...new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method))];
}

export async function buildHttpApp(
  services: Services,
  operations: readonly AnyOperation[],
  options: HttpOptions,
): Promise<FastifyInstance> {
  const headersTimeout = options.sockets?.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const app = Fastify({
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    logger: {
      level: options.logLevel,
      serializers: { req: serializeRequest, res: serializeReply },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-mandate"]',
          'req.headers["x-room-password"]',
          'req.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    bodyLimit: BODY_LIMIT,
    genReqId: (request) => {
      const given = request.headers['x-correlation-id'];
      return typeof given === 'string' && CORRELATION_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors,
    clientErrorHandler,
    // The same server either way (http-server.ts): made here, or made and listening before the app loaded.
    ...(options.server ? { serverFactory: options.server.serverFactory } : {}),
    http: { ...NODE_SERVER_OPTIONS },
    requestTimeout: 0,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
    forceCloseConnections: true,
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-correlation-id', request.id);
  });
  installHostCheck(app);
  installPageSecurity(app);
  installEarlyBodyLimit(app.server);
  const connections = installConnectionGuard(app, options.trustProxy, options.sockets?.maxPerAddress);
  // The header timeout runs from the moment the socket connects, so a socket that never sends a byte
  // is closed by it too (test/adversary/connections.test.ts). A server that listened before the app
  // existed has been timed since its first connection.
  const timing = options.server
    ? options.server.timing
    : installSlowRequestGuard(app.server, {
        headersTimeoutMs: headersTimeout,
        requestTimeoutMs: Math.max(REQUEST_TIMEOUT_MS, headersTimeout),
      });
  timing.reportTo((cut) => app.log.info(slowRequestLogFields(cut), 'request refused'));
  app.addHook('onClose', async () => timing.stop());
  if (options.server) {
    for (const socket of options.server.openSockets()) connections.adopt(socket);
  }

  await app.register(cors, {
    delegator: (request, callback) => {
      if (!crossOrigin(request.url ?? '')) return callback(null, { origin: false });
      callback(null, { ...CORS_POLICY });
    },
  });

  for (const hook of options.onRequest ?? []) app.addHook('onRequest', hook);
  if (options.metrics) installMetrics(app, options.metrics);
  installBodyParsing(app);
  installErrorHandling(app, routeMatcher(operations));
  await installBackPressure(app);
  installBodyBudget(app, new BodyBudget(options.sockets?.bodyBytesInFlight ?? DEFAULT_BODY_BYTES_IN_FLIGHT));
  registerOperationRoutes(app, services, operations);
  registerMetaRoutes(app, services, operations, options.capabilities, options.revocations);
  registerHomePage(app, services);
  registerGuidePages(app);
  registerDocsPage(app);
  registerRoomPage(app, services);
  registerVisualizerPage(app);
  registerPageAssets(app);
  for (const extend of options.extensions ?? []) await extend(app);
  if (options.server) {
    // fastify closes only a server it listened with itself; this one the same way, as app.close()'s
    // first onClose hook (they run last registered first), after the preClose hooks: every
    // connection closed (forceCloseConnections), then the listener.
    const { server } = options.server;
    app.addHook('onClose', async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  }
  return app;
}
