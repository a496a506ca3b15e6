/**
 * The front door: `GET /` (an HTML home page for browsers, a JSON index of links for programs),
 * `/favicon.ico`, `/robots.txt`, and `/guide` — the repository's docs/ folder served as plain text
 * files, so the guide a person is pointed at is the one that ships with this service.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_ROOM_CONFIG } from '../domain/config.js';
import { WIRED_MECHANISMS } from '../mechanisms/index.js';
import type { MechanismName } from '../mechanisms/types.js';
import type { Services } from '../operations/services.js';
import { ProtocolError } from '../errors.js';
import { escapeHtml } from '../pages/room-render.js';
import { HTML_TYPE, pageShell } from '../pages/shell.js';
import { prefersHtml } from './negotiate.js';

/** What each mechanism asks of a person and how it counts, in plain words (the form's choices). */
export const MECHANISM_WORDS: Record<MechanismName, string> = {
  simple_majority: 'Majority — pick one; an option needs more than half of the choices',
  supermajority: 'Supermajority — pick one; an option needs two thirds of the choices',
  plurality: 'Plurality — pick one; the most-picked option wins',
  approval: 'Approval — tick every option you can live with; the most-approved wins',
  ranked_choice: 'Ranked choice — order the options; counted in rounds (instant runoff)',
  ranked_pairwise: 'Ranked pairwise — order the options; counted head to head (Schulze)',
  score_vote: 'Score — give each option 0 to 5; the highest total wins',
  quadratic_vote: 'Quadratic — spread 9 credits; each option counts the square root of its credits',
};

const WINDOWS: readonly [number, string][] = [
  [600, '10 minutes'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '1 week'],
];

const SETTLE: readonly [number, string][] = [
  [0, 'No wait: seal at once'],
  [45, '45 seconds'],
  [300, '5 minutes'],
];

function durationWords(seconds: number): string {
  return WINDOWS.find(([s]) => s === seconds)?.[1] ?? `${seconds} seconds`;
}

/** The links a program reading `/` as JSON (and a person reading it as HTML) can follow. */
export function homeLinks(base: string): Record<string, string> {
  return {
    home: `${base}/`,
    api_reference: `${base}/docs`,
    openapi: `${base}/v1/openapi.json`,
    guide: `${base}/guide`,
    discovery: `${base}/.well-known/svc.json`,
    visualizer: `${base}/visualizer`,
    create_room: `${base}/api/rooms`,
    mcp: `${base}/mcp`,
  };
}

function homeHtml(services: Services): string {
  const d = DEFAULT_ROOM_CONFIG;
  const { name, operatorName, operatorContact } = services.info;
  const contact = /^(?:https?|mailto):/.test(operatorContact)
    ? `<a href="${escapeHtml(operatorContact)}">${escapeHtml(operatorContact.replace(/^mailto:/, ''))}</a>`
    : escapeHtml(operatorContact);
  const mechanisms = WIRED_MECHANISMS.map(
    (m) => `<option value="${m}"${m === d.mechanism ? ' selected' : ''}>${escapeHtml(MECHANISM_WORDS[m])}</option>`,
  ).join('');
  const windows = WINDOWS.map(
    ([seconds, words]) =>
      `<option value="${seconds}"${seconds === d.voting_window ? ' selected' : ''}>${words}${seconds === d.voting_window ? ' (default)' : ''}</option>`,
  ).join('');
  const body = `<header><h1>${escapeHtml(name)}</h1>
<p class="lead">A room where people and software agents discuss a question, propose options and decide together. Every decision ends with a receipt signed by this service and chained to the room's earlier receipts, so anyone can check what was decided and how it was counted.</p>
<p class="muted">Run by <strong>${escapeHtml(operatorName)}</strong> · contact ${contact}</p></header>
<main id="main">
<section aria-labelledby="create-h"><h2 id="create-h">Start a room</h2>
<template id="create-template"><form id="create-room" class="stack" method="post" novalidate>
<label for="question">Question</label>
<input id="question" name="question" required minlength="3" maxlength="500" autocomplete="off" placeholder="Where do we meet next week?">
<label for="options">Options, one per line <span class="muted">(leave empty to collect proposals first)</span></label>
<textarea id="options" name="options" rows="4"></textarea>
<label for="mechanism">How the vote is counted</label>
<select id="mechanism" name="mechanism">${mechanisms}</select>
<fieldset><legend>Who can read and join</legend>
<label class="inline"><input type="radio" name="visibility" value="unlisted" checked> Unlisted (default): anyone with the link can join; the room is not listed anywhere</label>
<label class="inline"><input type="radio" name="visibility" value="public"> Public: anyone can read the room without joining</label>
<label class="inline"><input type="radio" name="visibility" value="private"> Private: people join with an invite link or the password</label>
<label for="password">Password for a private room <span class="muted">(12 characters or more; optional — invite links work without it)</span></label>
<input id="password" name="password" type="password" minlength="12" autocomplete="new-password">
</fieldset>
<fieldset><legend>When the vote ends</legend>
<label for="voting_window">Choosing stays open for</label>
<select id="voting_window" name="voting_window">${windows}</select>
<label class="inline"><input type="checkbox" name="early_close" id="early_close"${d.early_close ? ' checked' : ''}> End early once the result can no longer change (default: off — the vote runs until the time is up, even when everyone has chosen)</label>
<label for="settle_window">When the result is known early, wait before sealing it (a last change of mind can still count)</label>
<select id="settle_window" name="settle_window">${SETTLE.map(([seconds, words]) => `<option value="${seconds}"${seconds === d.settle_window ? ' selected' : ''}>${words}${seconds === d.settle_window ? ' (default)' : ''}</option>`).join('')}</select>
<p class="muted">Settling only applies when the vote ends early. A room without a quorum counts whoever chose (quorum: ${d.quorum ?? 'none'}); choices are shown ${d.choice_visibility === 'live' ? 'as they are cast' : `(${escapeHtml(d.choice_visibility)})`}, and the host votes too. The <a href="/guide">guide</a> explains every setting.</p>
</fieldset>
<label for="display_name">Your name in the room</label>
<input id="display_name" name="display_name" maxlength="100" autocomplete="nickname" value="host">
<button type="submit">Create the room</button>
<p id="create-status" role="status" aria-live="polite"></p>
</form></template>
<noscript><p>Creating a room from this page needs JavaScript. Without it, send <code>POST /api/rooms</code> with a JSON body (see the <a href="/docs">API reference</a>), or use the <code>conclave</code> command line.</p></noscript>
</section>
<section aria-labelledby="more-h"><h2 id="more-h">Read more</h2>
<ul>
<li><a href="/docs">API reference</a> — every operation, rendered from <a href="/v1/openapi.json">the live OpenAPI document</a></li>
<li><a href="/guide">Guide</a> — rooms, decisions, settings, mechanisms and receipts, from this service's docs/ folder</li>
<li><a href="/.well-known/svc.json">Discovery document</a> — for agents: transports, mechanisms, keys and defaults</li>
<li><a href="/visualizer">State-chart visualizer</a> — watch a room's machines move</li>
</ul>
<p class="muted">Agents connect over REST (<code>/api/rooms</code>) or MCP (<code>/mcp</code>). Default vote length: ${durationWords(d.voting_window)}.</p>
</section>
</main>`;
  return pageShell({ title: name, body, scripts: ['/assets/home.js'] });
}

/** A small mark for the tab: a speech bubble in the pages' accent colour. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="3" width="28" height="20" rx="5" fill="#0b57d0"/><path d="M9 23l-2 7 8-7z" fill="#0b57d0"/><path d="M9 13l4 4 9-9" stroke="#fff" stroke-width="3" fill="none"/></svg>`;

/** Room pages name rooms a creator may want kept out of search engines; the front pages may be indexed. */
const ROBOTS = `User-agent: *
Allow: /$
Allow: /docs
Allow: /guide
Disallow: /r/
Disallow: /api/
Disallow: /mcp
Disallow: /visualizer
`;

const GUIDE_FILE = /^[a-z0-9][a-z0-9._-]*\.md$/;
const GUIDE_DIR = new URL(import.meta.url.endsWith('.ts') ? '../../docs/' : '../../../docs/', import.meta.url);

async function guideFiles(): Promise<string[]> {
  try {
    return (await readdir(GUIDE_DIR)).filter((f) => GUIDE_FILE.test(f)).sort();
  } catch {
    return [];
  }
}

export function registerHomePage(app: FastifyInstance, services: Services): void {
  app.get('/', async (request, reply) => {
    reply.header('vary', 'accept').header('cache-control', 'no-store');
    if (prefersHtml(request.headers.accept)) return reply.header('content-type', HTML_TYPE).send(homeHtml(services));
    return reply.send({
      name: services.info.name,
      purpose:
        'Rooms where people and agents discuss, propose options and decide; every decision yields a signed receipt.',
      operator: { name: services.info.operatorName, contact: services.info.operatorContact },
      links: homeLinks(services.baseUrl),
    });
  });
  app.get('/favicon.ico', async (_request, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON),
  );
  app.get('/robots.txt', async (_request, reply) =>
    reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(ROBOTS),
  );
  app.get('/guide', async (_request, reply) => {
    const files = await guideFiles();
    const list = files.length
      ? `<ul>${files.map((f) => `<li><a href="/guide/${encodeURIComponent(f)}">${escapeHtml(f)}</a></li>`).join('')}</ul>`
      : '<p>This installation ships without the docs/ folder; read it in the source repository.</p>';
    const body = `<header><h1>Guide</h1><p class="lead">The documents in this service's <code>docs/</code> folder, served as they ship (Markdown text).</p></header>
<main id="main">${list}</main>`;
    return reply
      .header('content-type', HTML_TYPE)
      .header('cache-control', 'no-store')
      .send(pageShell({ title: 'Guide', body }));
  });
  app.get('/guide/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const files = await guideFiles();
    if (!files.includes(file)) {
      throw new ProtocolError({
        code: 'vendor:conclave:not_found',
        message: `There is no guide document ${file}. The guide lists its documents at /guide.`,
        details: { path: `/guide/${file}` },
      });
    }
    const text = await readFile(new URL(file, GUIDE_DIR), 'utf8');
    return reply.header('content-type', 'text/markdown; charset=utf-8').header('cache-control', 'no-store').send(text);
  });
}
