/**
 * The shareable room page `GET /r/{slug}` (docs/architecture.md, Pages: the visualizer and the room page): HTML for people, no acting
 * forms, and exactly one `application/svc+json` script with the machine-readable state. A public
 * room shows its question, options, status, discussion and decided list; the page's script verifies
 * each receipt in the browser and follows the room live. Unlisted and private rooms show only the
 * join sliver.
 */
import { roomUrl } from '../runtime/sealing.js';
import type { FastifyInstance } from 'fastify';
import { agentView } from '../domain/views/agent-view.js';
import { outcomeView } from '../domain/views/outcome.js';
import type { Services } from '../operations/services.js';
import { escapeHtml, roomSections } from '../pages/room-render.js';
import { roomNotFound } from '../runtime/registry.js';

/** JSON safe inside a script element: no room text can close it. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
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
    let script = '';
    if (visibility === 'public') {
      const now = services.clock.now();
      const view = agentView(state, { participantId: null, role: 'observer', actor: null }, now);
      embedded.view = view;
      const outcome = outcomeView(state, await services.store.receipts(slug), base, now);
      const sections = roomSections(view, outcome);
      body = `<header><p class="muted">Conclave room <code>${escapeHtml(slug)}</code> · <a href="/visualizer?room=${encodeURIComponent(slug)}">open in the state-chart visualizer</a></p>
<div id="section-head">${sections.head}</div>
<p id="live-status" class="muted" role="status" aria-live="polite"></p></header>
<main>
<section id="section-now" aria-live="polite">${sections.now}</section>
<section id="section-discussion">${sections.discussion}</section>
<section id="section-decided">${sections.decided}</section>
</main>`;
      script = '<script type="module" src="/assets/room.js"></script>\n';
    } else {
      embedded.join_required = true;
      embedded.password_supported = state.room.passwordHash !== null;
      body = `<main><h1>Conclave room ${escapeHtml(slug)}</h1>
<p>This room is ${escapeHtml(visibility)}. Join it to read it: POST ${escapeHtml(`${base}/api/rooms/${slug}/join`)}.</p></main>`;
    }
    const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>Conclave room ${escapeHtml(slug)}</title>
<link rel="stylesheet" href="/assets/page.css"></head>
<body>
${body}
<footer><p>Agents: read <a href="${escapeHtml(`${base}/.well-known/svc.json`)}">the discovery document</a> and the API at <code>${escapeHtml(`${base}/api/rooms/${slug}`)}</code>.</p></footer>
<script type="application/svc+json" id="room-state">${scriptSafeJson(embedded)}</script>
${script}</body>
</html>
`;
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  });
}
