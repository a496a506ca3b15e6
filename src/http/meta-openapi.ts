/**
 * OpenAPI description of the meta routes (src/http/meta.ts; docs/agents.md, docs/operators.md):
 * discovery, the JWKS, health, readiness and the OpenAPI document itself, each answer a closed,
 * named component with an example.
 */
import { MANDATE_ACTIONS } from '../auth/mandate-claims.js';
import { DEFAULT_ROOM_CONFIG } from '../domain/config.js';
import type { ErrorCode } from '../errors.js';
import { WIRED_MECHANISMS } from '../mechanisms/index.js';

type Json = Record<string, unknown>;

/**
 * The protocol version this service speaks: discovery's protocol_version and the OpenAPI document's
 * info.version, which clients compare (the package's build version is the health answer's).
 */
export const PROTOCOL_VERSION = '0.1';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = (description: string) => ({ type: 'string', description });
const strings = (description: string) => ({
  type: 'array',
  description,
  items: { type: 'string', description: 'One entry.' },
});
/** An array whose items are one of `values` (a fixed set the service knows). */
const among = (description: string, values: readonly string[], item: string) => ({
  type: 'array',
  description,
  items: { type: 'string', enum: [...values], description: item },
});
/** A closed object: every property listed, `required` the ones always present. */
const closed = (description: string, properties: Json, required: string[] = Object.keys(properties)): Json => ({
  type: 'object',
  description,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
  properties,
});

/** How discovery describes a leaf of the live log (docs/transparency-log.md, The leaf). */
export const LEAF_DESCRIPTION =
  'conclave-receipt-commitment/v1: the ASCII lines "conclave-receipt-commitment/v1", the position key id (8 lowercase hex), base64 of the position label (the first 32 bytes of the ECVRF-EDWARDS25519-SHA512-TAI output over "conclave receipt position v1\\n" + the receipt\'s signed svc.room_id + "\\n" + its svc.sequence) and base64 of SHA-256 of the receipt\'s compact JWS, each followed by "\\n"; a room\'s members get the labels and their proofs from GET /api/rooms/{slug}/log-positions';

const BASE = 'https://conclave.example';
const KEY_EXAMPLE = {
  kty: 'OKP',
  crv: 'Ed25519',
  alg: 'EdDSA',
  use: 'sig',
  kid: 'k-2026-05-01',
  x: 'fzDS4Tk4fVOHmiJ8Q3MTNdgsF0A9ReJ7WjPdAmS2QrM',
};

const STRING_KEYWORDS = ['description', '$ref', 'format', 'pattern', 'contentMediaType'];
const NUMBER_KEYWORDS = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
];

export const META_OPENAPI_SCHEMAS: Json = {
  JwksKey: closed('One Ed25519 public key that signs receipts.', {
    kty: { const: 'OKP', description: 'Key type.' },
    crv: { const: 'Ed25519', description: 'Curve.' },
    alg: { const: 'EdDSA', description: 'Algorithm.' },
    use: { const: 'sig', description: 'Signing key.' },
    kid: str('Key id, named in the kid header of the receipts it signs.'),
    x: str('The public key, base64url.'),
  }),
  Jwks: closed('The receipt signing keys.', {
    keys: { type: 'array', description: 'The current key first, then retired keys.', items: ref('JwksKey') },
  }),
  DiscoveryDocument: closed(
    'What this service offers: transports, mechanisms, auth modes, config defaults, keys.',
    {
      protocol_version: { const: PROTOCOL_VERSION, description: 'The protocol version served.' },
      protocol_label: str('The protocol label (svc/0.1).'),
      issuer_id: str('This service: the issuer of its receipts.'),
      name: str('The service name.'),
      purpose: str('What the service is for, in a sentence.'),
      operator: closed('Who runs this service.', {
        name: { type: ['string', 'null'], description: 'The operator name; null if unset.' },
        contact: { type: ['string', 'null'], description: 'How to reach the operator; null if unset.' },
      }),
      transports: closed(
        'Where to talk to the service.',
        {
          rest: str('The REST base of rooms.'),
          mcp: str('The participant MCP endpoint (when MCP is served).'),
          mcp_host: str('The host MCP endpoint (when MCP is served).'),
          mcp_protocol_versions: strings('The MCP protocol versions served (when MCP is served).'),
        },
        ['rest'],
      ),
      auth: closed(
        'How callers authenticate.',
        {
          auth_modes: among('token and, when enabled, mandate.', ['token', 'mandate'], 'An auth mode.'),
          mandate_required: { type: 'boolean', description: 'Whether every call needs a mandate (never, here).' },
          mandate_alg: among('Accepted mandate signature algorithms.', ['EdDSA'], 'A JWS algorithm.'),
          oauth_resource_metadata: str('Where the OAuth protected-resource metadata is (when mandates are enabled).'),
        },
        ['auth_modes', 'mandate_required', 'mandate_alg'],
      ),
      mechanisms_supported: among('The voting mechanisms rooms may use.', WIRED_MECHANISMS, 'A mechanism.'),
      mandate_actions: among(
        'The actions a mandate may grant; empty when mandates are off.',
        MANDATE_ACTIONS,
        'A mandate action.',
      ),
      room_kind: { type: 'string', enum: ['ephemeral', 'persistent'], description: 'The default room type.' },
      visibility: among('The room visibilities offered.', ['public', 'unlisted', 'private'], 'A visibility.'),
      deliberation_modes_supported: among(
        'The deliberation modes offered.',
        ['optional', 'disabled'],
        'A deliberation mode.',
      ),
      long_running_pattern: {
        type: 'string',
        enum: ['webhook', 'poll'],
        description: 'How to follow a room without holding a request.',
      },
      supports_long_poll: { type: 'boolean', description: 'Whether GET next-action waits.' },
      long_poll_max_wait_seconds: {
        type: 'integer',
        description: 'The longest wait a long-poll holds, in seconds (when long-poll is served).',
      },
      supports_sse_upgrade: { type: 'boolean', description: 'Whether the event stream is served.' },
      default_voting_window_seconds: { type: 'integer', description: 'The default voting window, in seconds.' },
      room_config_defaults: { $ref: '#/components/schemas/RoomConfig', description: 'The RoomConfig defaults.' },
      audit_log: closed(
        'The transparency log of every receipt (docs/transparency-log.md); present when it runs.',
        {
          kind: { const: 'c2sp-tlog-tiles', description: 'The read API: C2SP tlog-tiles.' },
          log_url: str('The base of the tiles, checkpoints and proofs.'),
          checkpoint_url: str('The latest signed checkpoint.'),
          origin: str("The checkpoint origin line (the note key's name)."),
          verifier_key: str('The note verifier key: <name>+<hex key id>+<base64(0x01 ‖ Ed25519 key)>.'),
          leaf: str(
            'What a leaf is: a commitment to one receipt under its VRF position label (conclave-receipt-commitment/v1), never the receipt itself.',
          ),
          position_keys: {
            type: 'array',
            description:
              'The ECVRF-EDWARDS25519-SHA512-TAI public keys that label leaves, one per receipt signing key the service holds, current first.',
            items: closed('One position key.', {
              key_id: str('The key id leaves carry: 8 lowercase hex, the first 4 bytes of SHA-256(public key).'),
              public_key: str('The 32-byte public key, base64url.'),
            }),
          },
          witnesses: strings('Verifier keys of the witnesses that cosign checkpoints.'),
          frozen: {
            type: 'array',
            description:
              'The frozen v1 log, whose leaves were whole receipts: its checkpoints, hash tiles and proofs are served read-only, its entries withheld. Present only when it has leaves.',
            items: closed('One frozen log.', {
              origin: str('Its checkpoint origin line.'),
              verifier_key: str('Its note verifier key.'),
              size: { type: 'integer', minimum: 1, description: 'Its final tree size.' },
              log_url: str('The base of its checkpoints, tiles and proofs.'),
            }),
          },
        },
        ['kind', 'log_url', 'checkpoint_url', 'origin', 'verifier_key', 'leaf', 'position_keys', 'witnesses'],
      ),
      room_retention: closed('How long rooms are kept.', {
        policy: { const: 'keep_everything', description: 'keep_everything: rooms are kept until deleted.' },
      }),
      membership_rule: closed('Who may join rooms.', {
        kind: { const: 'open', description: 'open: anyone with the slug, subject to each room.' },
      }),
      keys: { type: 'array', description: 'The receipt signing keys.', items: ref('JwksKey') },
      jwks_url: str('Where the receipt signing keys are.'),
      revocations: {
        type: 'array',
        description: 'Revoked mandates (hosted keys).',
        items: closed(
          'One revoked mandate.',
          {
            jti: str('The revoked mandate id.'),
            revoked_at: str('When (RFC 3339, UTC).'),
            reason: str('Why, if recorded.'),
          },
          ['jti', 'revoked_at'],
        ),
      },
      openapi_url: str('Where this document is.'),
      conformance: closed('Whether conformance was validated.', {
        self_attested: { type: 'boolean', description: 'The operator attests conformance.' },
        validated: { type: 'boolean', description: 'Whether an outside validation was run.' },
        validated_at: { type: ['string', 'null'], description: 'When; null if never.' },
        validated_against: { type: ['string', 'null'], description: 'Against what; null if never.' },
      }),
    },
    [
      'protocol_version',
      'protocol_label',
      'issuer_id',
      'name',
      'purpose',
      'operator',
      'transports',
      'auth',
      'mechanisms_supported',
      'mandate_actions',
      'room_kind',
      'visibility',
      'deliberation_modes_supported',
      'long_running_pattern',
      'supports_long_poll',
      'supports_sse_upgrade',
      'default_voting_window_seconds',
      'room_config_defaults',
      'room_retention',
      'membership_rule',
      'keys',
      'jwks_url',
      'revocations',
      'openapi_url',
      'conformance',
    ],
  ),
  HealthResponse: closed('Liveness: the process answers; degraded when a dependency check fails.', {
    status: { enum: ['ok', 'degraded'], description: 'degraded when a check fails.' },
    version: str('The service version.'),
    checks: closed('Each dependency checked.', {
      store: { enum: ['ok', 'fail'], description: 'The store answered a ping within 600 ms.' },
      signing_key: { enum: ['ok', 'fail'], description: 'A receipt signing key is loaded.' },
    }),
  }),
  ReadyResponse: closed('Readiness: 200 ready, 503 not_ready.', {
    status: { enum: ['ready', 'not_ready'], description: 'Whether the store answers.' },
  }),
  JsonValue: {
    type: ['string', 'number', 'boolean', 'null', 'array', 'object'],
    description: 'Any JSON value (an example, a constant or a default).',
  },
  JsonSchemaNode: {
    type: 'object',
    description:
      'A JSON Schema 2020-12 schema of this document (OpenAPI 3.1 dialect). The keywords listed are those the document uses; a schema may carry further JSON Schema and OpenAPI keywords (discriminator, examples, …).',
    properties: {
      type: {
        type: ['string', 'array'],
        description: 'The JSON type, or a list of types.',
        items: { type: 'string', description: 'A JSON type.' },
      },
      ...Object.fromEntries(
        STRING_KEYWORDS.map((keyword) => [keyword, { type: 'string', description: `The ${keyword} keyword.` }]),
      ),
      ...Object.fromEntries(
        NUMBER_KEYWORDS.map((keyword) => [keyword, { type: 'number', description: `The ${keyword} keyword.` }]),
      ),
      const: { ...ref('JsonValue'), description: 'The const keyword: the one value allowed.' },
      default: { ...ref('JsonValue'), description: 'The default keyword.' },
      enum: { type: 'array', description: 'The values allowed.', items: ref('JsonValue') },
      properties: {
        type: 'object',
        description: 'The schema of each property.',
        additionalProperties: ref('JsonSchemaNode'),
      },
      items: { ...ref('JsonSchemaNode'), description: 'The schema of each array item.' },
      required: strings('The properties always present.'),
      additionalProperties: {
        type: ['boolean', 'object'],
        description: 'Whether, or with what schema, further properties are allowed.',
      },
      allOf: { type: 'array', description: 'Schemas all of which apply.', items: ref('JsonSchemaNode') },
      anyOf: { type: 'array', description: 'Schemas one or more of which apply.', items: ref('JsonSchemaNode') },
      oneOf: { type: 'array', description: 'Schemas exactly one of which applies.', items: ref('JsonSchemaNode') },
    },
  },
  OpenApiDocument: closed(
    'An OpenAPI 3.1 document (this one).',
    {
      openapi: { const: '3.1.0', description: 'The OpenAPI version.' },
      info: closed(
        'Title, version, description and license of the API.',
        {
          title: str('The API title.'),
          version: str('The service version (package.json).'),
          description: str('What the API is.'),
          license: closed('The license.', {
            name: str('The license name.'),
            identifier: str('Its SPDX identifier.'),
          }),
        },
        ['title', 'version', 'license'],
      ),
      servers: {
        type: 'array',
        description: 'Where the API is served.',
        items: closed('A server.', { url: str('Its base URL.'), description: str('What it is.') }, ['url']),
      },
      tags: {
        type: 'array',
        description: 'The operation groups.',
        items: closed('A tag.', { name: str('The tag.'), description: str('What its operations do.') }),
      },
      paths: {
        type: 'object',
        description: 'Every route, keyed by its path template.',
        additionalProperties: {
          type: 'object',
          description: 'The operations of one path, keyed by HTTP method (get, post, patch, delete).',
          additionalProperties: {
            type: 'object',
            description: 'One operation.',
            required: ['operationId', 'responses'],
            properties: {
              operationId: str('A stable operation name.'),
              summary: str('One line.'),
              description: str('What it does.'),
              tags: strings('Its groups.'),
              security: {
                type: 'array',
                description: 'The credentials accepted; [] for a public operation.',
                items: {
                  type: 'object',
                  description: 'One accepted credential combination.',
                  additionalProperties: strings('Scopes (always empty).'),
                },
              },
              parameters: {
                type: 'array',
                description: 'Path, query and header parameters.',
                items: {
                  type: 'object',
                  description: 'A parameter.',
                  required: ['name', 'in'],
                  properties: {
                    name: str('The parameter name.'),
                    in: { enum: ['path', 'query', 'header'], description: 'Where it travels.' },
                    required: { type: 'boolean', description: 'Whether it must be sent.' },
                    description: str('What it means.'),
                    schema: ref('JsonSchemaNode'),
                    example: { ...ref('JsonValue'), description: 'An example value.' },
                  },
                },
              },
              requestBody: {
                type: 'object',
                description: 'The body, by media type.',
                properties: {
                  required: { type: 'boolean', description: 'Whether a body must be sent.' },
                  content: {
                    type: 'object',
                    description: 'Its schema and example by media type.',
                    additionalProperties: ref('OpenApiMediaType'),
                  },
                },
              },
              responses: {
                type: 'object',
                description: 'The answers, keyed by HTTP status.',
                additionalProperties: {
                  type: 'object',
                  description: 'One answer.',
                  required: ['description'],
                  properties: {
                    description: str('When it is given.'),
                    content: {
                      type: 'object',
                      description: 'Its schema and example by media type.',
                      additionalProperties: ref('OpenApiMediaType'),
                    },
                  },
                },
              },
            },
          },
        },
      },
      components: closed(
        'Named schemas and the security schemes.',
        {
          schemas: {
            type: 'object',
            description: 'The named schemas, referenced as #/components/schemas/<name>.',
            additionalProperties: ref('JsonSchemaNode'),
          },
          securitySchemes: {
            type: 'object',
            description: 'The credentials: bearer token, mandate, room password.',
            additionalProperties: {
              type: 'object',
              description: 'One credential kind.',
              required: ['type'],
              properties: {
                type: { enum: ['http', 'apiKey'], description: 'The scheme type.' },
                scheme: str('http: the scheme (bearer).'),
                in: { const: 'header', description: 'apiKey: where it travels.' },
                name: str('apiKey: the header name.'),
                description: str('What the credential is.'),
              },
            },
          },
        },
        ['schemas'],
      ),
    },
    ['openapi', 'info', 'paths', 'components'],
  ),
  OpenApiMediaType: {
    type: 'object',
    description: 'The schema and example of one media type.',
    properties: {
      schema: ref('JsonSchemaNode'),
      example: { ...ref('JsonValue'), description: 'An example, valid against the schema.' },
      examples: {
        type: 'object',
        description: 'Named examples.',
        additionalProperties: {
          type: 'object',
          description: 'A named example.',
          properties: {
            summary: str('One line.'),
            description: str('What it shows.'),
            value: { ...ref('JsonValue'), description: 'The example.' },
            externalValue: str('Where the example is, when it is not inline (binary bodies).'),
          },
        },
      },
    },
  },
};

const DISCOVERY_EXAMPLE = {
  protocol_version: PROTOCOL_VERSION,
  protocol_label: `svc/${PROTOCOL_VERSION}`,
  issuer_id: BASE,
  name: 'Conclave',
  purpose: 'Room-based group decisions for software agents: discuss, propose, decide, and receive signed receipts.',
  operator: { name: 'Example Org', contact: 'ops@conclave.example' },
  transports: {
    rest: `${BASE}/api/rooms`,
    mcp: `${BASE}/mcp`,
    mcp_host: `${BASE}/mcp/host`,
    mcp_protocol_versions: ['2026-07-28', '2025-11-25'],
  },
  auth: {
    auth_modes: ['token', 'mandate'],
    mandate_required: false,
    mandate_alg: ['EdDSA'],
    oauth_resource_metadata: `${BASE}/.well-known/oauth-protected-resource`,
  },
  mechanisms_supported: [...WIRED_MECHANISMS],
  mandate_actions: [...MANDATE_ACTIONS],
  room_kind: 'ephemeral',
  visibility: ['public', 'unlisted', 'private'],
  deliberation_modes_supported: ['optional', 'disabled'],
  long_running_pattern: 'webhook',
  supports_long_poll: true,
  long_poll_max_wait_seconds: 50,
  supports_sse_upgrade: true,
  default_voting_window_seconds: DEFAULT_ROOM_CONFIG.voting_window,
  room_config_defaults: DEFAULT_ROOM_CONFIG,
  audit_log: {
    kind: 'c2sp-tlog-tiles',
    log_url: `${BASE}/log/`,
    checkpoint_url: `${BASE}/log/checkpoint`,
    origin: 'conclave.example/log/v2',
    verifier_key: 'conclave.example/log/v2+515e2c2f+AT6bt9Vx3rTJOgqeVzyKFLBjmhsoPnqLjxFw8vzEuV6N',
    leaf: LEAF_DESCRIPTION,
    position_keys: [{ key_id: 'ca002cf4', public_key: 'OxjwQCMUljr-8a199SKn7KOj2jwgQSycVygmn82lpVQ' }],
    witnesses: [],
  },
  room_retention: { policy: 'keep_everything' },
  membership_rule: { kind: 'open' },
  keys: [KEY_EXAMPLE],
  jwks_url: `${BASE}/.well-known/jwks.json`,
  revocations: [{ jti: 'm-5f2c9a', revoked_at: '2026-05-01T09:00:00.000Z', reason: 'key revoked' }],
  openapi_url: `${BASE}/v1/openapi.json`,
  conformance: { self_attested: true, validated: false, validated_at: null, validated_against: null },
};

const OPENAPI_EXAMPLE = {
  openapi: '3.1.0',
  info: { title: 'Conclave', version: '0.1.0', license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
  servers: [{ url: BASE, description: 'This service.' }],
  paths: {
    '/healthz': {
      get: {
        operationId: 'healthResponse',
        summary: 'Liveness and version',
        security: [],
        responses: {
          '200': {
            description: 'Success',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/HealthResponse' } } },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      ReadyResponse: {
        type: 'object',
        required: ['status'],
        additionalProperties: false,
        properties: { status: { enum: ['ready', 'not_ready'], description: 'Whether the store answers.' } },
      },
    },
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'A participant token, the creator token or an admin token.',
      },
    },
  },
};

const META_ROUTES: {
  path: string;
  tag: string;
  summary: string;
  description: string;
  schema: string;
  example: Json;
}[] = [
  {
    path: '/.well-known/svc.json',
    tag: 'discovery',
    summary: 'Discovery document',
    description:
      'What this service offers, only as far as it is wired: transports, auth modes, mechanisms, room config defaults, receipt keys, the transparency log and revoked mandates.',
    schema: 'DiscoveryDocument',
    example: DISCOVERY_EXAMPLE,
  },
  {
    path: '/.well-known/jwks.json',
    tag: 'discovery',
    summary: 'Receipt signing keys (JWKS)',
    description:
      'Every key that ever signed a receipt or a mandate here, the current one first: old receipts keep verifying.',
    schema: 'Jwks',
    example: { keys: [KEY_EXAMPLE] },
  },
  {
    path: '/healthz',
    tag: 'meta',
    summary: 'Liveness and version',
    description: 'Always 200 while the process answers; status degraded names the failing dependency check.',
    schema: 'HealthResponse',
    example: { status: 'ok', version: '0.1.0', checks: { store: 'ok', signing_key: 'ok' } },
  },
  {
    path: '/readyz',
    tag: 'meta',
    summary: 'Readiness',
    description:
      'Whether to send traffic here: 200 when the start-up warm-up has ended and the store answers within 600 ms, else 503 not_ready.',
    schema: 'ReadyResponse',
    example: { status: 'ready' },
  },
  {
    path: '/v1/openapi.json',
    tag: 'meta',
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 description of every route: generated from the operation table at start.',
    schema: 'OpenApiDocument',
    example: OPENAPI_EXAMPLE,
  },
];

/** The meta paths; `errors` builds the error responses of the given codes (openapi.ts). */
export function metaOpenApiPaths(errors: (codes: readonly ErrorCode[]) => Json): Json {
  const paths: Json = {};
  for (const meta of META_ROUTES) {
    const ok = (description: string, example: Json) => ({
      description,
      content: { 'application/json': { schema: ref(meta.schema), example } },
    });
    paths[meta.path] = {
      get: {
        operationId: meta.schema.charAt(0).toLowerCase() + meta.schema.slice(1),
        summary: meta.summary,
        description: meta.description,
        tags: [meta.tag],
        security: [],
        responses: {
          '200': ok('Success', meta.example),
          ...errors(['rate_limit.exceeded', 'internal.error']),
          ...(meta.path === '/readyz' ? { '503': ok('Not ready', { status: 'not_ready' }) } : {}),
        },
      },
    };
  }
  return paths;
}
