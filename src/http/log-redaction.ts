/**
 * No secret reaches a log line (docs/concepts.md, Credentials): a client that wrongly puts a token, password, mandate or
 * invite in the URL is refused, but fastify logs the request line before any route runs. The
 * request serializer logs the path with credential-shaped segments masked and the query string with
 * every value masked except those of parameters known to carry no secret.
 */
import type { FastifyRequest } from 'fastify';

export const REDACTED = '[redacted]';

/** Query parameters of the protocol's read routes; their values are cursors, counts and names. */
const SAFE_QUERY_KEYS = new Set([
  'since',
  'since_seq',
  'wait',
  'for',
  'limit',
  'include',
  'decision',
  'cursor',
  'after',
  'before',
  'types',
  'event_types',
  'room',
]);

/** Tokens the service issues (t_, it_, dc_, rk_ + base64url) and compact JWS (mandates), anywhere in a path. */
const CREDENTIAL_SHAPED = /^(?:(?:t|it|dc|rk)_[A-Za-z0-9_-]{16,}|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/;

export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const maskedPath = path
    .split('/')
    .map((segment) => (CREDENTIAL_SHAPED.test(safeDecode(segment)) ? REDACTED : segment))
    .join('/');
  if (queryAt === -1) return maskedPath;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      const key = safeDecode(pair.slice(0, equals));
      return SAFE_QUERY_KEYS.has(key) ? pair : `${pair.slice(0, equals)}=${REDACTED}`;
    })
    .join('&');
  return `${maskedPath}?${query}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** pino serializer for `req`: fastify's default fields, with the URL redacted. */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
