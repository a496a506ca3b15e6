/**
 * Content negotiation for routes that serve people and programs at one address (`/`, `/r/{slug}`,
 * errors): a browser's navigation asks for text/html first; API clients ask for JSON or anything.
 * HTML is chosen only when the Accept header ranks text/html above application/json — a missing
 * header, `*\/*` and `application/json` keep the JSON every client reads today.
 */
function quality(accept: string, type: string): number {
  let best = -1;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().split(';');
    if (range.trim().toLowerCase() !== type) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(value)) best = Math.max(best, value);
  }
  return best;
}

export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = quality(accept, 'text/html');
  return html > 0 && html > quality(accept, 'application/json');
}

/** Paths that belong to the API and its documents: their errors stay JSON whatever the Accept header says. */
const API_PATH = /^\/(?:api|mcp|v1|\.well-known|oauth|metrics|healthz|readyz)(?:[/?]|$)/;

/** What negotiation reads of a request: a fastify request, or node's own before the app loads (early-server.ts). */
export interface NegotiatedRequest {
  method?: string | undefined;
  url?: string | undefined;
  headers: { accept?: string | undefined };
}

/** A browser navigating to a page (not an API path) that would rather read HTML. */
export function wantsPage(request: NegotiatedRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (API_PATH.test(request.url ?? '/')) return false;
  return prefersHtml(request.headers.accept);
}
