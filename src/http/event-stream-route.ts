/**
 * GET /api/rooms/{slug}/events/stream — server-sent events (docs/agents.md, The REST loop). Everything that can fail (unknown
 * room, bad cursor, mandate, read wall, a full process) fails before the stream starts, as a JSON
 * error envelope; then the response is handed to an engagement EventStream.
 */
import type { FastifyInstance } from 'fastify';
import { watchCredential } from '../engagement/credential-watch.js';
import { parkingClaim } from '../engagement/capacity.js';
import { parseOperationInput } from '../operations/input.js';
import { openEventStream } from '../operations/open-event-stream.js';
import { runOperation } from '../operations/run.js';
import type { Services } from '../operations/services.js';
import { roomNotFound } from '../runtime/registry.js';
import { refuseCredentialsInUrl, requestContext } from './routes.js';

export const EVENT_STREAM_PATH = openEventStream.path;

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export function eventStreamRoute(services: Services): (app: FastifyInstance) => void {
  return (app) => {
    app.get('/api/rooms/:slug/events/stream', async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const query = (request.query ?? {}) as Record<string, unknown>;
      refuseCredentialsInUrl(query);
      if (!(await services.registry.exists(slug))) throw roomNotFound(slug);
      const lastEventId = request.headers['last-event-id'];
      const { last_event_id: _ignored, ...cursors } = query;
      const { input } = parseOperationInput(openEventStream, {
        ...cursors,
        slug,
        ...(lastEventId ? { last_event_id: Array.isArray(lastEventId) ? lastEventId[0] : lastEventId } : {}),
      });
      const ctx = requestContext(services, request, `GET /api/rooms/${slug}/events/stream`, query);
      const { after_seq: afterSeq } = await runOperation(openEventStream, ctx, input, undefined);
      // The stream re-checks its credential on every commit; a seat recovery or revocation between the
      // checks above and this read ends it at its first pump.
      const opened = await services.registry.read(slug);
      if (!opened) throw roomNotFound(slug);
      const watch = watchCredential(services, slug, opened, ctx.credentials);
      services.engagement.openStream(
        slug,
        afterSeq as number,
        parkingClaim(request.ip, ctx.credentials),
        () => {
          reply.hijack();
          // Headers set by hooks (correlation id, CORS) are written by hand once the reply is hijacked.
          for (const [name, value] of Object.entries(reply.getHeaders())) {
            if (value !== undefined) reply.raw.setHeader(name, value);
          }
          reply.raw.writeHead(200, STREAM_HEADERS);
          reply.raw.flushHeaders();
          return reply.raw;
        },
        watch,
      );
    });
  };
}
