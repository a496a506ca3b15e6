/**
 * The front door: `GET /` (an HTML home page for browsers, a JSON index of links for programs),
 * `/favicon.ico` and `/robots.txt`. The guide the page points at is src/http/guide-page.ts.
 */
import type { FastifyInstance } from 'fastify';
import { DEFAULT_ROOM_CONFIG } from '../domain/config.js';
import { WIRED_MECHANISMS } from '../mechanisms/index.js';
import type { MechanismName } from '../mechanisms/types.js';
import type { Services } from '../operations/services.js';
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

/** How long a slate collects proposals when the form's options are left empty. */
const PROPOSAL_WINDOWS = WINDOWS;
export const DEFAULT_PROPOSAL_WINDOW = 86_400;

/** choice_visibility in plain words, for the form's "who sees who chose what". */
const VISIBILITY_CHOICES: readonly [string, string][] = [
  ['live', 'Open ballot: everyone in the room sees who chose what, as choices are cast'],
  ['after_decided', 'Hidden until decided: who chose what is shown once the decision is sealed'],
  ['never', 'Secret ballot: only the totals and the outcome are ever shown, never who chose what'],
];

function durationWords(seconds: number): string {
  return WINDOWS.find(([s]) => s === seconds)?.[1] ?? `${seconds} seconds`;
}

function durationOptions(choices: readonly [number, string][], selected: number): string {
  return choices
    .map(
      ([seconds, words]) =>
        `<option value="${seconds}"${seconds === selected ? ' selected' : ''}>${words}${seconds === selected ? ' (default)' : ''}</option>`,
    )
    .join('');
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
  const body = `<header><h1>${escapeHtml(name)}</h1>
<p class="lead">A room where people and software agents discuss a question, propose options and decide together. Every decision ends with a receipt signed by this service and chained to the room's earlier receipts, so anyone can check what was decided and how it was counted.</p>
<p class="muted">Run by <strong>${escapeHtml(operatorName)}</strong> · contact ${contact}</p></header>
<main id="main">
<section aria-labelledby="create-h"><h2 id="create-h">Start a room</h2>
<template id="create-template"><form id="create-room" class="stack" method="post">
<p class="muted">Every setting below starts at its default; each says what the default does.</p>
<label for="question">Question</label>
<input id="question" name="question" required minlength="3" maxlength="500" autocomplete="off" placeholder="Where do we meet next week?" aria-describedby="question-error">
<p id="question-error" class="field-error" hidden></p>
<label for="options">Options, one per line</label>
<p id="options-help" class="muted">Leave empty to collect proposals first: members propose options, and choosing opens when the host starts it (a button on the room's page), or by itself once the collecting time below is up and at least one option was proposed. If nobody has proposed an option once the collecting time and then the voting time have both passed, the question ends without a result. With options, choosing opens at once.</p>
<textarea id="options" name="options" rows="4" aria-describedby="options-help options-error"></textarea>
<p id="options-error" class="field-error" hidden></p>
<label for="proposal_window">When the options are left empty, collect proposals for</label>
<select id="proposal_window" name="proposal_window">${durationOptions(PROPOSAL_WINDOWS, DEFAULT_PROPOSAL_WINDOW)}</select>
<label for="mechanism">How the vote is counted</label>
<select id="mechanism" name="mechanism">${mechanisms}</select>
<fieldset><legend>One decision or a standing room</legend>
<label class="inline"><input type="radio" name="type" value="ephemeral"${d.type === 'ephemeral' ? ' checked' : ''}> One decision${d.type === 'ephemeral' ? ' (default)' : ''}: the room is for this question; once it is decided, the room stops suggesting a next one (the host can still ask one)</label>
<label class="inline"><input type="radio" name="type" value="persistent"${d.type === 'persistent' ? ' checked' : ''}> A standing room${d.type === 'persistent' ? ' (default)' : ''}: for a series of questions; after each decision the room suggests asking the next one, and receipts record each as a standing decision</label>
</fieldset>
<fieldset><legend>Who can read and join</legend>
<p class="muted">No room is listed anywhere: people reach it through the link you share.</p>
<label class="inline"><input type="radio" name="visibility" value="unlisted" checked> Unlisted (default): anyone with the link can join, and must join to read</label>
<label class="inline"><input type="radio" name="visibility" value="public"> Public: anyone with the link can read the room without joining</label>
<label class="inline"><input type="radio" name="visibility" value="private"> Private: people join with an invite link or the password</label>
<label for="password">Password for a private room <span class="muted">(12 characters or more; optional — invite links work without it)</span></label>
<input id="password" name="password" type="password" minlength="12" maxlength="1024" autocomplete="new-password" aria-describedby="password-error">
<p id="password-error" class="field-error" hidden></p>
</fieldset>
<fieldset><legend>Who sees who chose what</legend>
${VISIBILITY_CHOICES.map(([value, words]) => `<label class="inline"><input type="radio" name="choice_visibility" value="${value}"${value === d.choice_visibility ? ' checked' : ''}> ${words}${value === d.choice_visibility ? ' (default)' : ''}</label>`).join('\n')}
</fieldset>
<fieldset><legend>Who votes</legend>
<label class="inline"><input type="checkbox" name="creator_votes" id="creator_votes"${d.creator_votes ? ' checked' : ''}> I vote too (default: ${d.creator_votes ? 'on' : 'off'}). Untick to host without voting: your seat is then not counted and cannot choose.</label>
<label for="quorum">Quorum: responses a decision needs to have a winner <span class="muted">(optional)</span></label>
<p id="quorum-help" class="muted">Leave empty (default: ${d.quorum === null ? 'no quorum' : d.quorum}) to count whoever chose. With a number, a decision that ends with fewer choices and abstentions than that has no winner.</p>
<input id="quorum" name="quorum" type="number" inputmode="numeric" min="1" max="1000000" step="1" aria-describedby="quorum-help quorum-error">
<p id="quorum-error" class="field-error" hidden></p>
</fieldset>
<fieldset><legend>When the vote ends</legend>
<p id="ends-summary">With the defaults, choosing stays open for ${durationWords(d.voting_window)} and the vote ends when that time is up — even if everyone has chosen sooner. To end as soon as the result can no longer change, tick "End early" below.</p>
<label for="voting_window">Choosing stays open for</label>
<select id="voting_window" name="voting_window">${durationOptions(WINDOWS, d.voting_window)}</select>
<label class="inline"><input type="checkbox" name="early_close" id="early_close"${d.early_close ? ' checked' : ''}> End early once the result can no longer change (default: ${d.early_close ? 'on' : 'off — the vote runs until the time is up'})</label>
<label for="settle_window">When the result is known early, wait before sealing it (a last change of mind can still count)</label>
<select id="settle_window" name="settle_window">${durationOptions(SETTLE, d.settle_window)}</select>
<p class="muted">The wait only applies when the vote ends early. The <a href="/guide/how-decisions-end.md">guide explains how decisions end</a>.</p>
</fieldset>
<label for="display_name">Your name in the room</label>
<input id="display_name" name="display_name" required maxlength="100" autocomplete="nickname" value="host" aria-describedby="display_name-error">
<p id="display_name-error" class="field-error" hidden></p>
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
}
