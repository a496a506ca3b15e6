/**
 * A refusal as a person reads it: the same code and message as the JSON envelope (so a person and
 * an agent reading the same failure see the same words), on a page in the pages' style, with a way
 * forward. Only browsers navigating to a page get it (src/http/negotiate.ts); API clients keep the
 * envelope.
 */
import type { ErrorSpec } from '../errors.js';
import { escapeHtml } from '../pages/room-render.js';
import { pageShell } from '../pages/shell.js';

const TITLES: Record<number, string> = {
  400: 'That request could not be read',
  401: 'You need to join first',
  403: 'That is not allowed',
  404: 'Nothing here',
  405: 'That is not allowed here',
  409: 'That clashed with another change',
  413: 'That was too large',
  414: 'That address is too long',
  429: 'Too many requests',
  503: 'The service is busy',
};

function wayForward(spec: ErrorSpec, status: number): string {
  if (spec.code === 'room.not_found') {
    return '<p>The room may have been deleted, or the link was mistyped. Ask whoever shared it for a fresh link, or <a href="/">start a new room</a>.</p>';
  }
  if (status === 429 || status === 503) {
    return '<p>Wait a moment and reload this page. <a href="/">Go to the home page</a>.</p>';
  }
  if (status >= 500)
    return '<p>Reload the page in a moment; if it keeps failing, tell the operator (see the <a href="/">home page</a>).</p>';
  return '<p><a href="/">Go to the home page</a>, read the <a href="/docs">API reference</a> or the <a href="/guide">guide</a>.</p>';
}

export function errorPageHtml(spec: ErrorSpec, status: number, requestId: string | undefined): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'That did not work');
  const body = `<header><h1>${escapeHtml(title)}</h1></header>
<main id="main" class="error-page">
<p class="lead" id="error-message">${escapeHtml(spec.message)}</p>
${spec.hint ? `<p>${escapeHtml(spec.hint)}</p>` : ''}
${wayForward(spec, status)}
<p class="muted">Error <span class="code">${escapeHtml(spec.code)}</span> (HTTP ${status})${requestId ? ` · request <span class="code">${escapeHtml(requestId)}</span>` : ''}</p>
</main>`;
  return pageShell({ title, body });
}
