/**
 * OAuth routes of docs/concepts.md, Mandates: the device flow endpoints, the approval page and the two OAuth
 * metadata documents. The token, device-authorization and revocation endpoints answer flat OAuth
 * errors; the approval endpoint answers the REST envelope. Both form-encoded and JSON bodies are
 * read; the form parser is scoped to this plugin.
 */
import { noteErrorCode } from '../observability/error-codes.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type GuessThrottle, guessIn } from '../auth/guess-throttle.js';
import { DEVICE_CODE_GRANT, type DeviceFlow, OAuthError, type OAuthParams, SCOPES } from '../auth/device-flow.js';
import { invalidInput, ProtocolError, protocolError } from '../errors.js';
import { BODY_PARSE_ERROR, unreadableBody } from './body.js';
import { devicePageHeaders, renderDevicePage } from './device-page.js';
import { sendError, toProtocolError } from './errors.js';
import { bearerOf, refuseCredentialsInUrl } from './routes.js';

export interface OAuthRoutesOptions {
  deviceFlow: DeviceFlow;
  baseUrl: () => string;
  /** Wrong admin tokens on the approval route are guesses (auth/guess-throttle.ts). */
  guesses?: GuessThrottle | null | undefined;
}

/** Routes of this plugin, for the 405 matcher. */
export const OAUTH_ROUTES: readonly { path: string; method: string }[] = [
  { path: '/oauth/device_authorization', method: 'POST' },
  { path: '/oauth/token', method: 'POST' },
  { path: '/oauth/revoke', method: 'POST' },
  { path: '/oauth/device', method: 'GET' },
  { path: '/oauth/device/approve', method: 'POST' },
  { path: '/.well-known/oauth-protected-resource', method: 'GET' },
  { path: '/.well-known/oauth-authorization-server', method: 'GET' },
];

const FLAT_ERROR_ROUTES = new Set(['/oauth/device_authorization', '/oauth/token', '/oauth/revoke']);
const BODY_LIMIT = 64 * 1024;
const PUBLIC_CACHE = 'public, max-age=300';

export async function registerOAuthRoutes(app: FastifyInstance, options: OAuthRoutesOptions): Promise<void> {
  await app.register(async (scope) => oauthPlugin(scope, options));
}

async function oauthPlugin(app: FastifyInstance, { deviceFlow, baseUrl, guesses }: OAuthRoutesOptions): Promise<void> {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_request, body, done) => done(null, parseForm(body as string)),
  );

  app.setErrorHandler((error, request, reply) => {
    if (FLAT_ERROR_ROUTES.has(request.routeOptions.url ?? '')) return sendOAuthError(reply, flatError(error, request));
    const protocol = toProtocolError(error);
    if (protocol.status >= 500)
      request.log.error({ err: error, error_code: protocol.code, status: protocol.status }, 'request failed');
    return sendError(reply, request, protocol.toSpec(), protocol.status);
  });

  // docs/concepts.md, Credentials: a token, device code or admin token never travels in a URL.
  app.addHook('preValidation', async (request) => refuseCredentialsInUrl(request.query as Record<string, unknown>));

  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

  app.post('/oauth/device_authorization', { bodyLimit: BODY_LIMIT }, async (request, reply) =>
    noStore(reply).send(await deviceFlow.authorize(oauthParams(request))),
  );

  app.post('/oauth/token', { bodyLimit: BODY_LIMIT }, async (request, reply) =>
    noStore(reply).send(await deviceFlow.token(oauthParams(request))),
  );

  app.post('/oauth/revoke', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
    await deviceFlow.revoke(oauthParams(request), bearerOf(request));
    return noStore(reply).send({});
  });

  app.get('/oauth/device', async (request, reply) => {
    const given = (request.query as Record<string, unknown>).user_code;
    const userCode = typeof given === 'string' && given.trim() !== '' ? given.trim().slice(0, 20) : null;
    const pending = userCode !== null && deviceFlow.enabled ? await deviceFlow.pendingRequest(userCode) : null;
    return reply
      .headers(devicePageHeaders())
      .send(renderDevicePage({ enabled: deviceFlow.enabled, userCode, request: pending }));
  });

  app.post('/oauth/device/approve', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
    // The check order (docs/architecture.md, Errors): body parsing, then the credential, then the fields.
    if (request.body === BODY_PARSE_ERROR) {
      throw invalidInput(
        'body',
        'The request body is not valid JSON. Send {"user_code": "XXXX-XXXX", "approve": true}.',
        'wrong_type',
      );
    }
    const unreadable = unreadableBody(request.body);
    if (unreadable) throw unreadable;
    const guess = guessIn({ clientIp: request.ip, credentials: { bearer: bearerOf(request) } }, {});
    if (guess && guesses) await guesses.guard(guess, async () => requireAdmin(request, deviceFlow));
    else requireAdmin(request, deviceFlow);
    const body = request.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw invalidInput('body', 'The body must be a JSON object {user_code, approve}.', 'wrong_type');
    }
    const { user_code: userCode, approve } = body as Record<string, unknown>;
    if (typeof approve !== 'boolean') {
      throw invalidInput(
        'approve',
        'approve must be a boolean: true approves the device request, false denies it.',
        'wrong_type',
      );
    }
    const decided = await deviceFlow.decide(userCode, approve);
    return reply.header('cache-control', 'no-store').send({ ok: true, ...decided });
  });

  app.get('/.well-known/oauth-protected-resource', async (_request, reply) => {
    const base = baseUrl();
    return reply.header('cache-control', PUBLIC_CACHE).send({
      resource: base,
      // Without an admin token no grant can be approved, so no authorization server is claimed.
      ...(deviceFlow.enabled ? { authorization_servers: [base] } : {}),
      scopes_supported: SCOPES,
      bearer_methods_supported: ['header'],
      resource_documentation: `${base}/v1/openapi.json`,
    });
  });

  app.get('/.well-known/oauth-authorization-server', async (request, reply) => {
    const base = baseUrl();
    if (!deviceFlow.enabled) {
      return sendError(
        reply,
        request,
        {
          code: 'vendor:conclave:not_found',
          message:
            'This deployment runs no authorization server: the device flow needs an admin token (CONCLAVE_ADMIN_TOKEN) to approve requests, and none is configured.',
          details: { path: '/.well-known/oauth-authorization-server' },
        },
        404,
      );
    }
    return reply.header('cache-control', PUBLIC_CACHE).send({
      issuer: base,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      grant_types_supported: [DEVICE_CODE_GRANT],
      scopes_supported: SCOPES,
      token_endpoint_auth_methods_supported: ['none'],
      response_types_supported: [],
    });
  });
}

/** Repeated parameters are kept as arrays so that they are refused (RFC 6749 §3.1). */
function parseForm(text: string): OAuthParams {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = params[name];
    params[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return params;
}

function oauthParams(request: FastifyRequest): OAuthParams {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (body === BODY_PARSE_ERROR || typeof body !== 'object' || Array.isArray(body)) {
    throw new OAuthError(
      'invalid_request',
      'The body must be a form (application/x-www-form-urlencoded) or a JSON object.',
    );
  }
  return body as OAuthParams;
}

/** Approval is an operator act for the admin token only (docs/concepts.md, Mandates). */
function requireAdmin(request: FastifyRequest, deviceFlow: DeviceFlow): void {
  const bearer = bearerOf(request);
  if (deviceFlow.isAdminToken(bearer)) return;
  const mandate = request.headers['x-mandate'];
  if (bearer === undefined && !mandate) {
    throw protocolError(
      'auth.required',
      'Approving a device request (POST /oauth/device/approve) needs the admin token in Authorization: Bearer <admin token>.',
    );
  }
  // A mandate, a participant token or a hosted key is a credential, but never the admin token.
  if (bearer === undefined || bearer.startsWith('t_') || bearer.startsWith('rk_')) {
    throw protocolError(
      'authority.denied',
      'Only the admin token may approve or deny device requests (POST /oauth/device/approve); this credential is not it.',
      { details: { authority: 'admin', required: 'admin token' } },
    );
  }
  throw protocolError(
    'auth.invalid_token',
    'The bearer credential is not valid here: approving a device request needs the admin token configured for this deployment.',
  );
}

function flatError(error: unknown, request: FastifyRequest): OAuthError {
  if (error instanceof OAuthError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new OAuthError('invalid_request', `The body is larger than ${BODY_LIMIT} bytes.`, 413);
  }
  if (error instanceof ProtocolError && error.status < 500) return new OAuthError('invalid_request', error.message);
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500) {
    return new OAuthError(
      'invalid_request',
      'The body must be a form (application/x-www-form-urlencoded) or a JSON object.',
    );
  }
  request.log.error({ err: error, error_code: 'oauth.server_error', status: 500 }, 'oauth request failed');
  return new OAuthError('server_error', 'An unexpected error occurred; retry later.', 500);
}

function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  // OAuth's own error vocabulary (RFC 6749), named as such in the access log.
  noteErrorCode(reply, `oauth.${error.error}`);
  if (error.status === 401) reply.header('www-authenticate', 'Bearer');
  return reply
    .code(error.status)
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send({ error: error.error, error_description: error.description });
}
