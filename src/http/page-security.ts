/**
 * The headers every page carries, set in one place (docs/architecture.md, Pages): whatever route
 * answers with text/html — the room page, the visualizer, the device approval page, and any page
 * added later — gets a Content-Security-Policy that runs only this host's scripts and styles, and may
 * not be framed (the visualizer and the device page take a token or a password in a form, so a
 * framing site could overlay them). No page is meant to be embedded. Every response, JSON included,
 * is `nosniff` and sends no Referer onwards (a room URL names the room).
 */
import type { FastifyInstance } from 'fastify';

/**
 * No inline script, style or handler may run: the pages load /assets/*.js and /assets/page.css, and
 * images are this host's or `data:` (the pages' empty favicon). The scripts read the API on this
 * origin only; forms post only here.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every response's security headers, and a page's (text/html), as [name, value] pairs in the order they are set. */
const FOR_EVERY_RESPONSE: readonly (readonly [string, string])[] = [
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
];
const FOR_PAGES: readonly (readonly [string, string])[] = [
  ...FOR_EVERY_RESPONSE,
  ['content-security-policy', PAGE_CSP],
  ['x-frame-options', 'DENY'],
];

/**
 * The security headers of a response with this content type. The hook below sets them; a response
 * written outside fastify's send path (a woken long-poll, http/routes.ts) sets the same list itself.
 */
export function securityHeaders(contentType: unknown): readonly (readonly [string, string])[] {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/html')
    ? FOR_PAGES
    : FOR_EVERY_RESPONSE;
}

export function installPageSecurity(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of securityHeaders(reply.getHeader('content-type'))) reply.header(name, value);
    return payload;
  });
}
