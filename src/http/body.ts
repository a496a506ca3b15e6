/**
 * Body parsing that never throws before the route runs: malformed JSON is marked and reported by
 * the route after the room-existence check (01 §9), and an empty body means "no fields".
 */
import type { FastifyInstance } from 'fastify';

export const BODY_PARSE_ERROR = Symbol('body-parse-error');
export const BODY_LIMIT = 4 * 1024 * 1024;

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
    const text = body as string;
    if (text === '') return done(null, undefined);
    const error = Object.assign(new Error('Request bodies must be JSON (Content-Type: application/json).'), {
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      statusCode: 415,
    });
    done(error, undefined);
  });
}
