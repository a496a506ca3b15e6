/**
 * Who may call the service from another origin, and the headers that say so, in one place: app.ts
 * hands the policy to @fastify/cors, and the early server (early-server.ts) writes the same headers
 * itself while the app loads, so a browser client calling during the start-up second reads the 503
 * instead of a CORS failure (docs/operators.md, Start). Any origin may call the API; the device
 * approval page and its approve call, revocation and the room pages are same-origin only. Imports
 * nothing: the early server's entry stays small.
 */

/** The options @fastify/cors is given for a cross-origin path (app.ts, its delegator). */
export const CORS_POLICY = {
  origin: '*',
  methods: 'GET, POST, PATCH, DELETE, OPTIONS',
  allowedHeaders:
    'Authorization, Content-Type, X-Mandate, X-Room-Password, Idempotency-Key, X-Correlation-Id, X-Confirm-Delete, Last-Event-ID, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, X-Body-Signature, X-Timestamp',
  exposedHeaders: 'Retry-After, X-Correlation-Id, Idempotent-Replayed',
  maxAge: 600,
  optionsSuccessStatus: 204,
  strictPreflight: false,
} as const;

/** The approval page and its approve call (and revocation, not among the cross-origin routes) are same-origin only. */
const NO_CORS = /^\/(?:oauth\/device(?:[/?]|$)|oauth\/revoke(?:[/?]|$)|r\/)/;

/** Whether a request to this URL (path and query, as the request line gives it) may come from another origin. */
export function crossOrigin(url: string): boolean {
  return !NO_CORS.test(url);
}

/**
 * The headers @fastify/cors writes with CORS_POLICY, for a response written without it: `Vary:
 * Origin` on every response (the delegator decides per request), the origin and the exposed headers
 * on a cross-origin path, and on a preflight (OPTIONS there) the methods, headers and max-age too.
 * A preflight is answered CORS_POLICY.optionsSuccessStatus with no body.
 */
export function corsHeaders(url: string, preflight: boolean): [string, string][] {
  const headers: [string, string][] = [['vary', 'Origin']];
  if (!crossOrigin(url)) return headers;
  headers.push(
    ['access-control-allow-origin', CORS_POLICY.origin],
    ['access-control-expose-headers', CORS_POLICY.exposedHeaders],
  );
  if (preflight) {
    headers.push(
      ['access-control-allow-methods', CORS_POLICY.methods],
      ['access-control-allow-headers', CORS_POLICY.allowedHeaders],
      ['access-control-max-age', String(CORS_POLICY.maxAge)],
    );
  }
  return headers;
}
