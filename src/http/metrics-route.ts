/** `GET /metrics` (Prometheus text format) and the response hook that feeds the request metrics. */
import type { FastifyInstance } from 'fastify';
import { errorCodeOf, routeClass } from '../observability/error-codes.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { isStoreUnavailable } from './errors.js';

export function installMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // Route templates, not URLs, so slugs and tokens never become label values.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    const code = errorCodeOf(reply);
    if (code !== undefined) metrics.refusal(routeClass(request.method, request.routeOptions.url), code);
  });
  app.addHook('onError', async (_request, _reply, error) => {
    if (isStoreUnavailable(error)) metrics.storeUnavailable();
  });
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.text();
    reply.header('content-type', contentType).header('cache-control', 'no-store');
    return body;
  });
}
