/**
 * The protocol error code each HTTP answer carried, so the access log line and the metrics can name
 * it: `auth.invalid_token` and `room.not_found` are both "a 4xx" otherwise. Every error envelope is
 * sent through `sendError` (src/http/errors.ts), which notes the code here.
 */
/** The reply objects are the keys: the code lives as long as its answer. */
const codes = new WeakMap<object, string>();

export function noteErrorCode(reply: object, code: string): void {
  codes.set(reply, code);
}

export function errorCodeOf(reply: object): string | undefined {
  return codes.get(reply);
}

/**
 * pino's `res` serializer for fastify's "request completed" line: the status, and the error code of
 * a 4xx/5xx answer.
 */
export function serializeReply(reply: { statusCode: number }): { statusCode: number; error_code?: string } {
  const code = reply.statusCode >= 400 ? errorCodeOf(reply) : undefined;
  return { statusCode: reply.statusCode, ...(code !== undefined ? { error_code: code } : {}) };
}

/** Rate-limit refusals are counted by the kind of route, not the route: few series, each telling. */
export function routeClass(method: string, route: string | undefined): string {
  if (route === undefined) return 'unmatched';
  if (route.startsWith('/mcp')) return 'mcp';
  if (route.startsWith('/oauth')) return 'oauth';
  if (method === 'POST' && route === '/api/rooms') return 'create';
  if (route === '/api/rooms/:slug/join') return 'join';
  if (route.endsWith('/next-action') || route.endsWith('/events/stream')) return 'wait';
  if (method === 'GET' || method === 'HEAD') return 'read';
  return 'write';
}
