/**
 * Body parsing that never throws before the route runs: malformed JSON and media types other than
 * JSON are marked and reported by the route after the room-existence check (docs/architecture.md, Errors), and an empty
 * body means "no fields". A route that reads no body (and the not-found handler) ignores the marks.
 */
import type { FastifyInstance } from 'fastify';
import { invalidInput, type ProtocolError } from '../errors.js';

export const BODY_PARSE_ERROR = Symbol('body-parse-error');
export const UNSUPPORTED_MEDIA_TYPE = Symbol('unsupported-media-type');
export const BODY_LIMIT = 4 * 1024 * 1024;

/** The input.invalid for a body the parser marked, or null for a readable one. */
export function unreadableBody(body: unknown): ProtocolError | null {
  if (body === BODY_PARSE_ERROR) {
    return invalidInput('body', 'The request body is not valid JSON. Send a JSON object.', 'wrong_type');
  }
  if (body === UNSUPPORTED_MEDIA_TYPE) {
    return invalidInput(
      'content-type',
      'Request bodies must be JSON: send Content-Type: application/json with a JSON object.',
      'wrong_type',
    );
  }
  return null;
}

export function installBodyParsing(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'application/*+json'],
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_request, body, done) => {
      const text = body as string;
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(null, BODY_PARSE_ERROR);
      }
    },
  );
  // Other media types (form posts of the OAuth endpoints are added where needed) keep the raw text.
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    done(null, (body as string) === '' ? undefined : UNSUPPORTED_MEDIA_TYPE);
  });
}
