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
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
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
    required: ['resource', 'scopes_supported', 'bearer_methods_supported'],
    properties: {
      resource: { type: 'string' },
      authorization_servers: { type: 'array', items: { type: 'string' } },
      scopes_supported: { type: 'array', items: { type: 'string' } },
      bearer_methods_supported: { type: 'array', items: { const: 'header' } },
      resource_documentation: { type: 'string' },
    },
  },
  OAuthAuthorizationServer: { type: 'object', additionalProperties: true, properties: { issuer: { type: 'string' } } },
};

export const OAUTH_OPENAPI_PATHS: Json = {
  '/.well-known/oauth-protected-resource': {
    get: {
      operationId: 'oauthProtectedResource',
      summary: 'OAuth protected-resource metadata (RFC 9728)',
      tags: ['discovery'],
      responses: { '200': { description: 'Metadata', content: json(ref('OAuthProtectedResource')) } },
    },
  },
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauthAuthorizationServer',
      summary: 'OAuth authorization-server metadata (RFC 8414); 404 when no admin token is configured',
      tags: ['discovery'],
      responses: {
        '200': { description: 'Metadata', content: json(ref('OAuthAuthorizationServer')) },
        ...envelopeErrors(['404']),
      },
    },
  },
  '/oauth/device_authorization': {
    post: {
      operationId: 'deviceAuthorization',
      summary: 'Start the device authorization flow (RFC 8628)',
      tags: ['oauth'],
      requestBody: {
        required: true,
        content: formOrJson({
          type: 'object',
          required: ['client_id'],
          properties: {
            client_id: { type: 'string', minLength: 1, maxLength: 100 },
            scope: { type: 'string', description: 'Space-separated svc:<action> scopes; default all.' },
            resource: { type: 'string' },
            agent_slug: { type: 'string', maxLength: 100 },
            from: { type: 'string', maxLength: 500 },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Device and user codes',
          content: json({
            type: 'object',
            properties: {
              device_code: { type: 'string' },
              user_code: { type: 'string' },
              verification_uri: { type: 'string' },
              verification_uri_complete: { type: 'string' },
              expires_in: { type: 'integer' },
              interval: { type: 'integer' },
            },
          }),
        },
        ...flatErrors(['400', '503']),
      },
    },
  },
  '/oauth/token': {
    post: {
      operationId: 'deviceToken',
      summary: 'Poll for and redeem a device grant',
      tags: ['oauth'],
      requestBody: {
        required: true,
        content: formOrJson({
          type: 'object',
          required: ['grant_type', 'device_code'],
          properties: {
            grant_type: { const: 'urn:ietf:params:oauth:grant-type:device_code' },
            device_code: { type: 'string' },
            client_id: { type: 'string' },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Hosted key and mandate',
          content: json({
            type: 'object',
            properties: {
              access_token: { type: 'string' },
              token_type: { const: 'Bearer' },
              expires_in: { type: 'integer' },
              scope: { type: 'string' },
              resource: { type: ['string', 'null'] },
              mandate: { type: 'string' },
              public_id: { type: 'string' },
            },
          }),
        },
        ...flatErrors(['400', '503']),
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
        content: formOrJson({ type: 'object', required: ['token'], properties: { token: { type: 'string' } } }),
      },
      responses: {
        '200': { description: 'Revoked (or unknown)', content: json({ type: 'object' }) },
        ...flatErrors(['400', '401']),
      },
    },
  },
  '/oauth/device': {
    get: {
      operationId: 'deviceApprovalPage',
      summary: 'Operator approval page',
      tags: ['oauth'],
      parameters: [{ name: 'user_code', in: 'query', required: false, schema: { type: 'string' } }],
      responses: { '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
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
          properties: { user_code: { type: 'string' }, approve: { type: 'boolean' } },
        }),
      },
      responses: {
        '200': {
          description: 'Decision recorded',
          content: json({
            type: 'object',
            properties: {
              ok: { const: true },
              user_code: { type: 'string' },
              status: { enum: ['approved', 'denied'] },
            },
          }),
        },
        ...envelopeErrors(['400', '401', '403', '429']),
      },
    },
  },
};
