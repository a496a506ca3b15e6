/**
 * The shareable room page `GET /r/{slug}`: plain HTML for people with no acting form, and exactly one
 * `application/svc+json` script with the machine-readable state. A public room shows its question,
 * options, status, discussion and decided list; unlisted and private rooms show only how to join.
 * The page's script (src/pages/room-page.ts) mounts the join form and, once seated, the actions,
 * verifies each receipt in the browser and follows the room live (docs/architecture.md, Pages).
 */
import { roomUrl } from '../runtime/sealing.js';
import type { FastifyInstance } from 'fastify';
import { agentView } from '../domain/views/agent-view.js';
import { outcomeView } from '../domain/views/outcome.js';
import type { Services } from '../operations/services.js';
import { escapeHtml, roomSections } from '../pages/room-render.js';
import { pageShell } from '../pages/shell.js';
import { roomNotFound } from '../runtime/registry.js';

/** JSON safe inside a script element: no room text can close it. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/**
 * How a person takes a seat: a name for public and unlisted rooms; the password (or an invite link,
 * which the page's script reads from the URL fragment) for private ones. The form sits in an inert
 * <template> that the page's script mounts and sends as JSON to the join API: the plain HTML has no
 * acting form (as the protocol's room page requires), and without scripts no form can send a
 * password anywhere — in particular not in a GET query; the page says how to join instead.
 */
function joinPanel(visibility: string, hasPassword: boolean): string {
  const note =
    visibility === 'private'
      ? `Open the invite link you were given${hasPassword ? ', or enter the room password' : ''}.`
      : 'Anyone with this link can join: choose the name the others will see.';
  const password =
    visibility === 'private'
      ? `${hasPassword ? '<div id="password-field" class="stack"><label for="join-password">Room password</label><input id="join-password" name="password" type="password" autocomplete="current-password"></div>' : ''}`
      : '';
  return `<section id="join-panel" class="panel" aria-labelledby="join-h"><h2 id="join-h">Join this room</h2>
<noscript><p>Joining from this page needs JavaScript.</p></noscript>
<template id="join-template"><form id="join-form" class="stack" method="post">
<p id="invite-note">${note}</p>
${password}<label for="join-name">Your name</label>
<input id="join-name" name="display_name" maxlength="100" autocomplete="nickname" required>
<button type="submit" id="join-button">Join</button>
<p id="join-status" role="status" aria-live="polite"></p>
</form></template>
</section>`;
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
    let sections = {
      head: `<h1 id="room-title">Conclave room ${escapeHtml(slug)}</h1>`,
      now: '',
      discussion: '',
      decided: '',
    };
    let readable = '';
    if (visibility === 'public') {
      const now = services.clock.now();
      const view = agentView(state, { participantId: null, role: 'observer', actor: null }, now);
      embedded.view = view;
      const outcome = outcomeView(state, await services.store.receipts(slug), base, now);
      sections = roomSections(view, outcome);
    } else {
      embedded.join_required = true;
      embedded.password_supported = state.room.passwordHash !== null;
      readable = `<p id="join-required">This room is ${escapeHtml(visibility)}. Join it to read it: people join below; agents POST ${escapeHtml(`${base}/api/rooms/${slug}/join`)}.</p>`;
    }
    const body = `<header><p class="muted">Conclave room <code>${escapeHtml(slug)}</code> · <a href="/visualizer?room=${encodeURIComponent(slug)}">open in the state-chart visualizer</a></p>
<div id="section-head">${sections.head}</div>
<p id="live-status" class="muted" role="status" aria-live="polite"></p></header>
<main id="main">
${readable}
${joinPanel(visibility, state.room.passwordHash !== null)}
<section id="seat-panel" class="panel" hidden aria-label="Your seat"></section>
<section id="section-now" aria-live="polite">${sections.now}</section>
<section id="section-act" aria-label="Take part"></section>
<section id="section-seats" aria-label="Seats"></section>
<section id="section-discussion">${sections.discussion}</section>
<section id="section-say" aria-label="Say something"></section>
<section id="section-decided">${sections.decided}</section>
<section id="section-host" aria-label="Host controls"></section>
</main>
<footer><p>Agents: read <a href="${escapeHtml(`${base}/.well-known/svc.json`)}">the discovery document</a> and the API at <code>${escapeHtml(`${base}/api/rooms/${slug}`)}</code>.</p></footer>`;
    const html = pageShell({
      title: `Conclave room ${slug}`,
      body,
      scripts: ['/assets/room.js'],
      embed: { id: 'room-state', json: scriptSafeJson(embedded) },
    });
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  });
}
