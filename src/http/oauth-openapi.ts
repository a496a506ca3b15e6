/**
 * OpenAPI descriptions of the OAuth routes (docs/concepts.md, Mandates), for buildOpenApi to merge: `paths` keyed like
 * the rest of the document and named, closed schemas with examples. The token, device-authorization
 * and revocation endpoints answer flat OAuth errors; the approval endpoint answers the REST envelope.
 */
import type { ErrorCode } from '../errors.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string, example: unknown) => ({ 'application/json': { schema: ref(name), example } });
const formOrJson = (name: string, example: Json) => ({
  'application/x-www-form-urlencoded': { schema: ref(name), example },
  ...json(name, example),
});
const str = (description: string) => ({ type: 'string', description });
const strings = (description: string) => ({
  type: 'array',
  description,
  items: { type: 'string', description: 'One entry.' },
});
const closed = (description: string, properties: Json, required: string[] = Object.keys(properties)): Json => ({
  type: 'object',
  description,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
  properties,
});

const BASE = 'https://conclave.example';
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'invalid_target',
  'unsupported_grant_type',
  'authorization_pending',
  'slow_down',
  'expired_token',
  'access_denied',
  'server_error',
];

const OAUTH_ERROR_EXAMPLE = {
  error: 'authorization_pending',
  error_description: 'The operator has not approved this request yet; keep polling.',
};

/** The flat OAuth error of the given statuses (RFC 6749, RFC 8628). */
const flatErrors = (statuses: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [
      status,
      { description, content: json('OAuthError', OAUTH_ERROR_EXAMPLE) },
    ]),
  );

export const OAUTH_OPENAPI_SCHEMAS: Json = {
  OAuthError: closed('An OAuth error (RFC 6749): flat, not the REST envelope.', {
    error: { enum: OAUTH_ERROR_CODES, description: 'The OAuth error code.' },
    error_description: str('What went wrong and what to do, in words.'),
  }),
  OAuthProtectedResource: closed(
    'Protected-resource metadata (RFC 9728).',
    {
      resource: str('The protected resource: this service.'),
      authorization_servers: strings('Where to get a credential (present when the device flow is enabled).'),
      scopes_supported: strings('The svc:<action> scopes.'),
      bearer_methods_supported: {
        type: 'array',
        description: 'Tokens travel in the Authorization header only.',
        items: { const: 'header', description: 'The Authorization header.' },
      },
      resource_documentation: str('Human documentation of the resource.'),
    },
    ['resource', 'scopes_supported', 'bearer_methods_supported', 'resource_documentation'],
  ),
  OAuthAuthorizationServer: closed('Authorization-server metadata (RFC 8414).', {
    issuer: str('The issuer: this service.'),
    device_authorization_endpoint: str('Where the device flow starts (RFC 8628).'),
    token_endpoint: str('Where the device code is redeemed.'),
    revocation_endpoint: str('Where a hosted key is revoked (RFC 7009).'),
    grant_types_supported: {
      type: 'array',
      description: 'Only the device grant.',
      items: { const: GRANT, description: 'The device authorization grant.' },
    },
    scopes_supported: strings('The svc:<action> scopes.'),
    token_endpoint_auth_methods_supported: {
      type: 'array',
      description: 'Public clients: none.',
      items: { const: 'none', description: 'No client authentication.' },
    },
    response_types_supported: {
      type: 'array',
      description: 'Empty: there is no authorization endpoint.',
      maxItems: 0,
      items: { type: 'string', description: 'Never present.' },
    },
  }),
  DeviceAuthorizationRequest: closed(
    'Who asks for a credential, and for what.',
    {
      client_id: { type: 'string', minLength: 1, maxLength: 100, description: 'Who is asking: the agent client id.' },
      scope: str('Space-separated svc:<action> scopes; default all.'),
      resource: str('The service base URL (the only resource protected here); default: any room.'),
      agent_slug: { type: 'string', maxLength: 100, description: 'A short name for the agent, shown to the approver.' },
      from: { type: 'string', maxLength: 500, description: 'Where the request comes from, shown to the approver.' },
    },
    ['client_id'],
  ),
  DeviceAuthorizationResponse: closed('The codes of a device grant (RFC 8628).', {
    device_code: str('The secret to poll /oauth/token with.'),
    user_code: str('The code the operator approves.'),
    verification_uri: str('Where the operator approves.'),
    verification_uri_complete: str('The same, with the user code filled in.'),
    expires_in: { type: 'integer', description: 'Seconds until the codes expire (600).' },
    interval: { type: 'integer', description: 'Seconds to wait between polls (5).' },
  }),
  DeviceTokenRequest: closed(
    'A poll for the grant.',
    {
      grant_type: { const: GRANT, description: 'The device grant.' },
      device_code: str('The device_code from /oauth/device_authorization.'),
      client_id: str('The client id the grant was started with.'),
    },
    ['grant_type', 'device_code'],
  ),
  DeviceTokenResponse: closed('A hosted key and its mandate.', {
    access_token: str('The hosted key (rk_…): send it as Authorization: Bearer.'),
    token_type: { const: 'Bearer', description: 'Always Bearer.' },
    expires_in: { type: 'integer', description: 'Seconds until the key and its mandate expire (30 days).' },
    scope: str('The granted scopes, space-separated.'),
    resource: { type: ['string', 'null'], description: 'The resource the credential is for; null: any room.' },
    mandate: str('The signed mandate (JWS): send it as X-Mandate.'),
    public_id: str("The key's public id, safe to log."),
  }),
  OAuthRevokeRequest: closed('The key to revoke.', { token: str('The hosted key to revoke.') }),
  OAuthRevokeResponse: closed('Empty: the key no longer works (an unknown key answers the same).', {}, []),
  DeviceApprovalRequest: closed('The operator decision.', {
    user_code: str('The user code shown to the agent.'),
    approve: { type: 'boolean', description: 'true approves, false denies.' },
  }),
  DeviceApprovalResponse: closed('The recorded decision.', {
    ok: { const: true, description: 'Always true.' },
    user_code: str('The user code.'),
    status: { enum: ['approved', 'denied'], description: 'The decision.' },
  }),
};

/** The OAuth paths; `errors` builds REST-envelope error responses of the given codes (openapi.ts). */
export function oauthOpenApiPaths(errors: (codes: readonly ErrorCode[]) => Json): Json {
  const limited = errors(['rate_limit.exceeded']);
  return {
    '/.well-known/oauth-protected-resource': {
      get: {
        operationId: 'oauthProtectedResource',
        summary: 'OAuth protected-resource metadata (RFC 9728)',
        description: 'Where agents learn how to obtain a credential for this service.',
        tags: ['discovery'],
        security: [],
        responses: {
          '200': {
            description: 'Metadata',
            content: json('OAuthProtectedResource', {
              resource: BASE,
              authorization_servers: [BASE],
              scopes_supported: ['svc:choose', 'svc:propose', 'svc:discuss'],
              bearer_methods_supported: ['header'],
              resource_documentation: `${BASE}/v1/openapi.json`,
            }),
          },
          ...errors(['rate_limit.exceeded', 'internal.error']),
        },
      },
    },
    '/.well-known/oauth-authorization-server': {
      get: {
        operationId: 'oauthAuthorizationServer',
        summary: 'OAuth authorization-server metadata (RFC 8414)',
        description: 'The device flow endpoints; 404 when no admin token is configured (no request could be approved).',
        tags: ['discovery'],
        security: [],
        responses: {
          '200': {
            description: 'Metadata',
            content: json('OAuthAuthorizationServer', {
              issuer: BASE,
              device_authorization_endpoint: `${BASE}/oauth/device_authorization`,
              token_endpoint: `${BASE}/oauth/token`,
              revocation_endpoint: `${BASE}/oauth/revoke`,
              grant_types_supported: [GRANT],
              scopes_supported: ['svc:choose', 'svc:propose', 'svc:discuss'],
              token_endpoint_auth_methods_supported: ['none'],
              response_types_supported: [],
            }),
          },
          ...errors(['vendor:conclave:not_found', 'rate_limit.exceeded', 'internal.error']),
        },
      },
    },
    '/oauth/device_authorization': {
      post: {
        operationId: 'deviceAuthorization',
        summary: 'Start the device authorization flow (RFC 8628)',
        description:
          'Hands out a device code to poll with and a user code for the operator to approve at verification_uri.',
        tags: ['oauth'],
        security: [],
        requestBody: {
          required: true,
          content: formOrJson('DeviceAuthorizationRequest', {
            client_id: 'travel-agent',
            scope: 'svc:choose svc:discuss',
            agent_slug: 'travel-agent',
          }),
        },
        responses: {
          '200': {
            description: 'Device and user codes',
            content: json('DeviceAuthorizationResponse', {
              device_code: 'dc_3oQ0yW2cS1n9b7Xv5Lk8Hq4Pz6Tm2Re0',
              user_code: 'WDJB-MJHT',
              verification_uri: `${BASE}/oauth/device`,
              verification_uri_complete: `${BASE}/oauth/device?user_code=WDJB-MJHT`,
              expires_in: 600,
              interval: 5,
            }),
          },
          ...flatErrors({
            '400': 'OAuth error: invalid_request, invalid_scope, invalid_target.',
            '413': 'OAuth error: invalid_request (body over 64 KiB).',
            '500': 'OAuth error: server_error.',
            '503': 'OAuth error: invalid_request (the device flow is off: no admin token configured).',
          }),
          ...limited,
        },
      },
    },
    '/oauth/token': {
      post: {
        operationId: 'deviceToken',
        summary: 'Poll for and redeem a device grant',
        description:
          'Answers authorization_pending until the operator decides; then once, the hosted key and its mandate. Poll no faster than interval.',
        tags: ['oauth'],
        security: [],
        requestBody: {
          required: true,
          content: formOrJson('DeviceTokenRequest', {
            grant_type: GRANT,
            device_code: 'dc_3oQ0yW2cS1n9b7Xv5Lk8Hq4Pz6Tm2Re0',
            client_id: 'travel-agent',
          }),
        },
        responses: {
          '200': {
            description: 'Hosted key and mandate',
            content: json('DeviceTokenResponse', {
              access_token: 'rk_9sLq2Vn4Xw7Yb1Cz3Df5Gh8Jk0Mp6Rt',
              token_type: 'Bearer',
              expires_in: 2592000,
              scope: 'svc:choose svc:discuss',
              resource: null,
              mandate: 'eyJhbGciOiJFZERTQSIsInR5cCI6InN2Yy1tYW5kYXRlK2p3dCJ9.eyJzdmMiOnt9fQ.c2lnbmF0dXJl',
              public_id: 'hk_7f3a9c',
            }),
          },
          ...flatErrors({
            '400':
              'OAuth error: invalid_request, invalid_grant, unsupported_grant_type, authorization_pending, slow_down, expired_token, access_denied.',
            '413': 'OAuth error: invalid_request (body over 64 KiB).',
            '500': 'OAuth error: server_error.',
            '503': 'OAuth error: invalid_request (the device flow is off: no admin token configured).',
          }),
          ...limited,
        },
      },
    },
    '/oauth/revoke': {
      post: {
        operationId: 'revokeHostedKey',
        summary: 'Revoke a hosted key and its mandate (RFC 7009)',
        description:
          'Authenticated by the admin token or by the hosted key itself; the mandate joins the revocations in discovery.',
        tags: ['oauth'],
        security: [{ bearerAuth: [] }],
        requestBody: {
          required: true,
          content: formOrJson('OAuthRevokeRequest', { token: 'rk_9sLq2Vn4Xw7Yb1Cz3Df5Gh8Jk0Mp6Rt' }),
        },
        responses: {
          '200': { description: 'Revoked (or unknown)', content: json('OAuthRevokeResponse', {}) },
          ...flatErrors({
            '400': 'OAuth error: invalid_request.',
            '401': 'OAuth error: invalid_client (neither the admin token nor the key itself).',
            '413': 'OAuth error: invalid_request (body over 64 KiB).',
            '500': 'OAuth error: server_error.',
          }),
          ...limited,
        },
      },
    },
    '/oauth/device': {
      get: {
        operationId: 'deviceApprovalPage',
        summary: 'Operator approval page',
        description: 'The HTML page where the operator reviews a device request and approves or denies it.',
        tags: ['oauth'],
        security: [],
        parameters: [
          {
            name: 'user_code',
            in: 'query',
            required: false,
            description: 'The user code to approve, filled in.',
            schema: { type: 'string' },
            example: 'WDJB-MJHT',
          },
        ],
        responses: {
          '200': {
            description: 'HTML page',
            content: {
              'text/html': {
                schema: { type: 'string', description: 'The approval page.' },
                example:
                  '<!doctype html><html lang="en"><head><title>Approve a device · Conclave</title></head>…</html>',
              },
            },
          },
          ...errors(['input.invalid', 'rate_limit.exceeded', 'internal.error']),
        },
      },
    },
    '/oauth/device/approve': {
      post: {
        operationId: 'approveDevice',
        summary: 'Approve or deny a device request (admin token)',
        description: 'The operator decision on a pending device request; repeating the same decision answers the same.',
        tags: ['oauth'],
        security: [{ bearerAuth: [] }],
        requestBody: {
          required: true,
          content: json('DeviceApprovalRequest', { user_code: 'WDJB-MJHT', approve: true }),
        },
        responses: {
          '200': {
            description: 'Decision recorded',
            content: json('DeviceApprovalResponse', { ok: true, user_code: 'WDJB-MJHT', status: 'approved' }),
          },
          ...errors([
            'input.invalid',
            'auth.required',
            'auth.invalid_token',
            'authority.denied',
            'rate_limit.exceeded',
            'internal.error',
            'vendor:conclave:unavailable',
          ]),
        },
      },
    },
  };
}
