/**
 * OpenAPI descriptions of the OAuth routes (docs/concepts.md, Mandates), for buildOpenApi to merge: `paths` keyed like
 * the rest of the document and the `OAuthProtectedResource` schema. The OAuth endpoints answer flat
 * OAuth errors; the approval endpoint answers the REST envelope.
 */
type Json = Record<string, unknown>;

const json = (schema: Json) => ({ 'application/json': { schema } });
const formOrJson = (schema: Json) => ({ 'application/x-www-form-urlencoded': { schema }, ...json(schema) });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const OAUTH_ERROR: Json = {
  type: 'object',
  description: 'An OAuth error (RFC 6749): flat, not the REST envelope.',
  required: ['error'],
  properties: {
    error: {
      type: 'string',
      enum: [
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
      ],
      description:
        'The OAuth error code (invalid_request, authorization_pending, slow_down, expired_token, access_denied, …).',
    },
    error_description: { type: 'string', description: 'What went wrong, in words.' },
  },
};

const flatErrors = (statuses: string[]) =>
  Object.fromEntries(
    statuses.map((status) => [status, { description: 'OAuth error', content: json(ref('OAuthError')) }]),
  );

const envelopeErrors = (statuses: string[]) =>
  Object.fromEntries(
    statuses.map((status) => [status, { description: 'Error envelope', content: json(ref('ErrorEnvelope')) }]),
  );

export const OAUTH_OPENAPI_SCHEMAS: Json = {
  OAuthError: OAUTH_ERROR,
  OAuthProtectedResource: {
    type: 'object',
    description: 'Protected-resource metadata (RFC 9728).',
    required: ['resource', 'scopes_supported', 'bearer_methods_supported'],
    properties: {
      resource: { type: 'string', description: 'The protected resource: this service.' },
      authorization_servers: {
        type: 'array',
        description: 'Where to get a credential (present when the device flow is enabled).',
        items: { type: 'string' },
      },
      scopes_supported: { type: 'array', description: 'The svc:<action> scopes.', items: { type: 'string' } },
      bearer_methods_supported: {
        type: 'array',
        description: 'Tokens travel in the Authorization header only.',
        items: { const: 'header' },
      },
      resource_documentation: { type: 'string', description: 'Human documentation of the resource.' },
    },
  },
  OAuthAuthorizationServer: {
    type: 'object',
    description: 'Authorization-server metadata (RFC 8414).',
    additionalProperties: true,
    properties: { issuer: { type: 'string', description: 'The issuer: this service.' } },
  },
};

export const OAUTH_OPENAPI_PATHS: Json = {
  '/.well-known/oauth-protected-resource': {
    get: {
      operationId: 'oauthProtectedResource',
      summary: 'OAuth protected-resource metadata (RFC 9728)',
      tags: ['discovery'],
      security: [],
      responses: {
        '200': { description: 'Metadata', content: json(ref('OAuthProtectedResource')) },
        ...envelopeErrors(['429']),
      },
    },
  },
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauthAuthorizationServer',
      summary: 'OAuth authorization-server metadata (RFC 8414); 404 when no admin token is configured',
      tags: ['discovery'],
      security: [],
      responses: {
        '200': { description: 'Metadata', content: json(ref('OAuthAuthorizationServer')) },
        ...envelopeErrors(['404', '429']),
      },
    },
  },
  '/oauth/device_authorization': {
    post: {
      operationId: 'deviceAuthorization',
      summary: 'Start the device authorization flow (RFC 8628)',
      tags: ['oauth'],
      security: [],
      requestBody: {
        required: true,
        content: formOrJson({
          type: 'object',
          required: ['client_id'],
          properties: {
            client_id: {
              type: 'string',
              minLength: 1,
              maxLength: 100,
              description: 'Who is asking: the agent client id.',
            },
            scope: { type: 'string', description: 'Space-separated svc:<action> scopes; default all.' },
            resource: { type: 'string', description: 'The room URL the credential is for; default: any room.' },
            agent_slug: {
              type: 'string',
              maxLength: 100,
              description: 'A short name for the agent, shown to the approver.',
            },
            from: {
              type: 'string',
              maxLength: 500,
              description: 'Where the request comes from, shown to the approver.',
            },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Device and user codes',
          content: json({
            type: 'object',
            description: 'The codes of a device grant.',
            required: [
              'device_code',
              'user_code',
              'verification_uri',
              'verification_uri_complete',
              'expires_in',
              'interval',
            ],
            properties: {
              device_code: { type: 'string', description: 'The secret to poll /oauth/token with.' },
              user_code: { type: 'string', description: 'The code the operator approves.' },
              verification_uri: { type: 'string', description: 'Where the operator approves.' },
              verification_uri_complete: { type: 'string', description: 'The same, with the user code filled in.' },
              expires_in: { type: 'integer', description: 'Seconds until the codes expire.' },
              interval: { type: 'integer', description: 'Seconds to wait between polls.' },
            },
          }),
        },
        ...flatErrors(['400', '503']),
        ...envelopeErrors(['429']),
      },
    },
  },
  '/oauth/token': {
    post: {
      operationId: 'deviceToken',
      summary: 'Poll for and redeem a device grant',
      tags: ['oauth'],
      security: [],
      requestBody: {
        required: true,
        content: formOrJson({
          type: 'object',
          required: ['grant_type', 'device_code'],
          properties: {
            grant_type: { const: 'urn:ietf:params:oauth:grant-type:device_code', description: 'The device grant.' },
            device_code: { type: 'string', description: 'The device_code from /oauth/device_authorization.' },
            client_id: { type: 'string', description: 'The client id the grant was started with.' },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Hosted key and mandate',
          content: json({
            type: 'object',
            description: 'A hosted key and its mandate.',
            required: ['access_token', 'token_type', 'expires_in', 'scope', 'resource', 'mandate', 'public_id'],
            properties: {
              access_token: { type: 'string', description: 'The hosted key (rk_…): send it as Authorization: Bearer.' },
              token_type: { const: 'Bearer', description: 'Always Bearer.' },
              expires_in: { type: 'integer', description: 'Seconds until the mandate expires.' },
              scope: { type: 'string', description: 'The granted scopes.' },
              resource: { type: ['string', 'null'], description: 'The room the credential is for; null: any.' },
              mandate: { type: 'string', description: 'The signed mandate (JWS): send it as X-Mandate.' },
              public_id: { type: 'string', description: "The key's public id, safe to log." },
            },
          }),
        },
        ...flatErrors(['400', '503']),
        ...envelopeErrors(['429']),
      },
    },
  },
  '/oauth/revoke': {
    post: {
      operationId: 'revokeHostedKey',
      summary: 'Revoke a hosted key and its mandate (RFC 7009)',
      tags: ['oauth'],
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: true,
        content: formOrJson({
          type: 'object',
          required: ['token'],
          properties: { token: { type: 'string', description: 'The hosted key to revoke.' } },
        }),
      },
      responses: {
        '200': {
          description: 'Revoked (or unknown)',
          content: json({ type: 'object', description: 'Empty: the key no longer works.', properties: {} }),
        },
        ...flatErrors(['400', '401']),
        ...envelopeErrors(['429']),
      },
    },
  },
  '/oauth/device': {
    get: {
      operationId: 'deviceApprovalPage',
      summary: 'Operator approval page',
      tags: ['oauth'],
      security: [],
      parameters: [
        {
          name: 'user_code',
          in: 'query',
          required: false,
          description: 'The user code to approve, filled in.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'HTML page',
          content: { 'text/html': { schema: { type: 'string', description: 'The approval page.' } } },
        },
        ...envelopeErrors(['400', '429']),
      },
    },
  },
  '/oauth/device/approve': {
    post: {
      operationId: 'approveDevice',
      summary: 'Approve or deny a device request (admin token)',
      tags: ['oauth'],
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['user_code', 'approve'],
          description: 'The operator decision.',
          properties: {
            user_code: { type: 'string', description: 'The user code shown to the agent.' },
            approve: { type: 'boolean', description: 'true approves, false denies.' },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Decision recorded',
          content: json({
            type: 'object',
            description: 'The recorded decision.',
            properties: {
              ok: { const: true, description: 'Always true.' },
              user_code: { type: 'string', description: 'The user code.' },
              status: { enum: ['approved', 'denied'], description: 'The decision.' },
            },
          }),
        },
        ...envelopeErrors(['400', '401', '403', '429']),
      },
    },
  },
};
