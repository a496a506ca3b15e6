/**
 * The shareable room page `GET /r/{slug}` (01-transport-and-auth.md §12): plain HTML, no acting
 * forms, and exactly one `application/svc+json` script with the machine-readable state. Unlisted and
 * private rooms show only the join sliver.
 */
import { roomUrl } from '../runtime/sealing.js';
import type { FastifyInstance } from 'fastify';
import { agentView } from '../domain/views/agent-view.js';
import type { Services } from '../operations/services.js';
import { roomNotFound } from '../runtime/registry.js';

/** JSON safe inside a script element: no room text can close it. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function registerRoomPage(app: FastifyInstance, services: Services): void {
  app.get('/r/:slug', async (request, reply) => {
    const { slug } = request.params as { slug: string };
    const state = await services.registry.read(slug);
    if (!state) throw roomNotFound(slug);
    const base = services.baseUrl;
    const visibility = state.room.config.visibility;
    const embedded: Record<string, unknown> = {
      schema: 'urn:svc:schema:url-room:v0',
      slug,
      url: roomUrl(base, slug),
      visibility,
      api: {
        room: `${base}/api/rooms/${slug}`,
        join: `${base}/api/rooms/${slug}/join`,
        next_action: `${base}/api/rooms/${slug}/next-action`,
        outcome: `${base}/api/rooms/${slug}/outcome`,
        events: `${base}/api/rooms/${slug}/events`,
      },
      discovery: `${base}/.well-known/svc.json`,
      mcp: { participant: `${base}/mcp`, host: `${base}/mcp/host` },
    };
    let body: string;
    if (visibility === 'public') {
      const view = agentView(state, { participantId: null, role: 'observer', actor: null }, services.clock.now());
      embedded.view = view;
      body = `<h1>Conclave room ${escapeHtml(slug)}</h1>
<p>${escapeHtml(String(view.brief))}</p>
<p>Status: ${escapeHtml(String(view.status))}</p>`;
    } else {
      embedded.join_required = true;
      embedded.password_supported = state.room.passwordHash !== null;
      body = `<h1>Conclave room ${escapeHtml(slug)}</h1>
<p>This room is ${escapeHtml(visibility)}. Join it to read it: POST ${escapeHtml(`${base}/api/rooms/${slug}/join`)}.</p>`;
    }
    const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Conclave room ${escapeHtml(slug)}</title></head>
<body>
${body}
<p>Agents: read <a href="${escapeHtml(`${base}/.well-known/svc.json`)}">the discovery document</a> and the API at <code>${escapeHtml(`${base}/api/rooms/${slug}`)}</code>.</p>
<script type="application/svc+json" id="room-state">${scriptSafeJson(embedded)}</script>
</body>
</html>
`;
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  });
}
