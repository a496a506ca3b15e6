/**
 * The live OpenAPI 3.1 document, generated from the operation table's zod schemas (JSON Schema
 * 2020-12 is OpenAPI 3.1's schema dialect) plus the service's fixed meta routes.
 */
import { z } from 'zod';
import { authorityConfigSchema, roomConfigSchema } from '../domain/config.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { errorCodes, errorEnvelopeSchema } from '../operations/error-codes.js';
import { jsonSchemaOf } from '../operations/json-schema.js';
import { openEventStream } from '../operations/open-event-stream.js';
import type { AnyOperation } from '../operations/types.js';
import { packageInfo } from '../package-info.js';
import { OAUTH_OPENAPI_PATHS, OAUTH_OPENAPI_SCHEMAS } from './oauth-openapi.js';

type Json = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Bad request: invalid input or an act the room state does not allow',
  '401': 'Missing, invalid or superseded credential',
  '403': 'The credential may not do this',
  '404': 'No such room, decision or resource',
  '405': 'Method not allowed',
  '409': 'Conflict with the current state',
  '413': 'Body too large',
  '429': 'Rate limited; retry after Retry-After seconds',
  '500': 'Internal error',
  '503': 'The store is unavailable; retry',
};

function schemaOf(schema: z.ZodType, io: 'input' | 'output', components: Json): Json {
  const json = JSON.parse(
    JSON.stringify(jsonSchemaOf(schema, io)).replaceAll('#/$defs/', '#/components/schemas/'),
  ) as Json;
  const defs = (json.$defs ?? {}) as Json;
  delete json.$defs;
  for (const [name, def] of Object.entries(defs)) components[name] ??= def;
  return json;
}

function named(name: string | undefined, schema: Json, components: Json): Json {
  if (!name) return schema;
  components[name] ??= schema;
  return { $ref: `#/components/schemas/${name}` };
}

/** One response per status the operation can answer with, the envelope's code narrowed to its codes. */
function errorResponses(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<string, ErrorCode[]>();
  for (const code of codes) {
    const status = String(ERROR_STATUS[code]);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  if (codes.includes('input.invalid')) byStatus.set('413', ['input.invalid']);
  const responses: Json = {};
  for (const status of [...byStatus.keys()].sort()) {
    const list = byStatus.get(status)!;
    responses[status] = {
      description: `${ERROR_DESCRIPTIONS[status] ?? 'Error'}: ${list.join(', ')}.`,
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorEnvelope' },
              {
                type: 'object',
                properties: {
                  error: {
                    type: 'object',
                    description: 'The error, its code one of those this operation answers with this status.',
                    properties: { code: { enum: list, description: 'The codes of this status.' } },
                  },
                },
              },
            ],
          },
        },
      },
    };
  }
  return responses;
}

function pathParams(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    description: PATH_PARAMETERS[m[1]!] ?? m[1],
    schema: { type: 'string' },
  }));
}

const PATH_PARAMETERS: Record<string, string> = {
  slug: 'The room slug (from create, an invite or the room URL).',
  code: 'The invite code.',
  id: 'The webhook id.',
  participant: 'The participant id.',
};

/** The operation's input as a JSON object schema without its path parameters (they live only in the path). */
function requestShape(op: AnyOperation, components: Json): { properties: Json; required: string[]; rest: Json } {
  const inPath = new Set(pathParams(op.path).map((p) => p.name as string));
  const input =
    op.input instanceof z.ZodObject
      ? z
          .object(Object.fromEntries(Object.entries(op.input.shape).filter(([key]) => !inPath.has(key))))
          .describe(z.globalRegistry.get(op.input)?.description ?? op.summary)
      : op.input;
  const json = schemaOf(input, 'input', components);
  const { properties = {}, required = [], ...rest } = json as { properties?: Json; required?: string[] };
  return { properties, required: required.filter((name) => !inPath.has(name)), rest };
}

function operationObject(op: AnyOperation, components: Json): Json {
  const { properties, required, rest } = requestShape(op, components);
  const example = op.example.input;
  const parameters: Json[] = pathParams(op.path).map((p) =>
    (p.name as string) in example ? { ...p, example: example[p.name as string] } : p,
  );
  let requestBody: Json | undefined;
  if (op.inputSource === 'query') {
    for (const [name, schema] of Object.entries(properties)) {
      const { description, ...typed } = schema as Json;
      parameters.push({
        name,
        in: 'query',
        required: required.includes(name),
        description,
        schema: typed,
        ...(name in example ? { example: example[name] } : {}),
      });
    }
  } else if (op.inputSource === 'body') {
    const body = { ...rest, type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
    const bodyExample = Object.fromEntries(Object.entries(example).filter(([key]) => key in properties));
    requestBody = {
      required: required.length > 0,
      content: {
        'application/json': { schema: named(op.requestSchemaName, body, components), example: bodyExample },
      },
    };
  }
  if (op.mutating) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: the same key with the same request returns the first response (marked Idempotent-Replayed) without acting again.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  const output = named(op.responseSchemaName, schemaOf(op.output, 'output', components), components);
  return {
    operationId: op.name,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    parameters,
    ...(requestBody ? { requestBody } : {}),
    security: SECURITY,
    responses: {
      '200': {
        description: 'Success',
        content: {
          'application/json': { schema: output, ...(op.example.output ? { example: op.example.output } : {}) },
        },
      },
      ...errorResponses(errorCodes(op)),
    },
  };
}

/** Room routes take any of the credentials, or none for what is public (a public room's reads). */
const SECURITY = [{}, { bearerAuth: [] }, { mandate: [] }, { roomPassword: [] }];

/** SSE is not a JSON operation, so it is described here rather than generated (docs/agents.md, The REST loop). */
function eventStreamPath(): Json {
  return {
    get: {
      operationId: 'streamEvents',
      summary: 'Server-sent event stream',
      description:
        'text/event-stream of RoomEvents (id, event, data frames; ": keep-alive" every 15 s). Resume with Last-Event-ID, since_event_id or since_seq: backfill, then live, no gap and no duplicate. Same credentials and read wall as /events.',
      tags: ['events'],
      parameters: [
        ...pathParams('/api/rooms/{slug}/events/stream'),
        {
          name: 'since_seq',
          in: 'query',
          required: false,
          description: 'Start after this event seq.',
          schema: { type: 'integer', minimum: 0 },
        },
        {
          name: 'since_event_id',
          in: 'query',
          required: false,
          description: 'Start after this event id.',
          schema: { type: 'string' },
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'Set by EventSource on reconnect: resume after this event id.',
          schema: { type: 'string' },
        },
      ],
      security: SECURITY,
      responses: {
        '200': {
          description: 'Event stream',
          content: { 'text/event-stream': { schema: { type: 'string', description: 'SSE frames of RoomEvents.' } } },
        },
        ...errorResponses(READ_ERRORS),
      },
    },
  };
}

/** The stream's checks are an operation outside the table (operations/open-event-stream.ts): its codes. */
const READ_ERRORS: readonly ErrorCode[] = errorCodes(openEventStream);

const META_ERRORS: readonly ErrorCode[] = ['rate_limit.exceeded', 'internal.error'];

const META_ROUTES: { path: string; tag: string; summary: string; schema: string }[] = [
  { path: '/.well-known/svc.json', tag: 'discovery', summary: 'Discovery document', schema: 'DiscoveryDocument' },
  { path: '/.well-known/jwks.json', tag: 'discovery', summary: 'Receipt signing keys (JWKS)', schema: 'Jwks' },
  { path: '/healthz', tag: 'meta', summary: 'Liveness and version', schema: 'HealthResponse' },
  { path: '/readyz', tag: 'meta', summary: 'Readiness', schema: 'ReadyResponse' },
  { path: '/v1/openapi.json', tag: 'meta', summary: 'This OpenAPI document', schema: 'OpenApiDocument' },
];

const TAGS: Record<string, string> = {
  meta: 'Service health and this document.',
  discovery: 'What the service offers and the keys its receipts are signed with.',
  rooms: 'Creating, reading, joining and administering rooms.',
  decisions: 'Opening decisions and following them to their sealed outcome.',
  actions: 'What a seat does in a room: discuss, propose, choose, abstain.',
  events: 'Replaying and following what happens in a room: events, long-poll, webhooks.',
  outcomes: 'Outcomes and their signed, hash-chained receipts.',
  oauth: 'The OAuth device flow that hands agents a credential.',
};

function metaSchemas(components: Json): void {
  components.JwksKey = {
    type: 'object',
    description: 'One Ed25519 public key that signs receipts.',
    required: ['kty', 'crv', 'x', 'kid'],
    properties: {
      kty: { const: 'OKP', description: 'Key type.' },
      crv: { const: 'Ed25519', description: 'Curve.' },
      alg: { const: 'EdDSA', description: 'Algorithm.' },
      use: { const: 'sig', description: 'Signing key.' },
      kid: { type: 'string', description: 'Key id, named in the kid header of the receipts it signs.' },
      x: { type: 'string', description: 'The public key, base64url.' },
    },
  };
  components.Jwks = {
    type: 'object',
    description: 'The receipt signing keys.',
    required: ['keys'],
    properties: {
      keys: {
        type: 'array',
        description: 'Current and retired keys.',
        items: { $ref: '#/components/schemas/JwksKey' },
      },
    },
  };
  const str = (description: string) => ({ type: 'string', description });
  const strings = (description: string) => ({ type: 'array', description, items: { type: 'string' } });
  components.DiscoveryDocument = {
    type: 'object',
    description: 'What this service offers: transports, mechanisms, auth modes, config defaults, keys.',
    required: ['protocol_version', 'issuer_id', 'transports', 'auth', 'mechanisms_supported', 'keys', 'jwks_url'],
    additionalProperties: false,
    properties: {
      protocol_version: { const: '0.1', description: 'The protocol version served.' },
      protocol_label: str('The protocol label (svc/0.1).'),
      issuer_id: str('This service: the issuer of its receipts.'),
      name: str('The service name.'),
      purpose: str('What the service is for, in a sentence.'),
      operator: {
        type: 'object',
        description: 'Who runs this service.',
        properties: {
          name: { type: ['string', 'null'], description: 'The operator name; null if unset.' },
          contact: { type: ['string', 'null'], description: 'How to reach the operator; null if unset.' },
        },
      },
      transports: {
        type: 'object',
        description: 'Where to talk to the service.',
        properties: {
          rest: str('The REST base of rooms.'),
          mcp: str('The participant MCP endpoint.'),
          mcp_host: str('The host MCP endpoint.'),
          mcp_protocol_versions: strings('The MCP protocol versions served.'),
        },
      },
      auth: {
        type: 'object',
        description: 'How callers authenticate.',
        properties: {
          auth_modes: strings('token and, when enabled, mandate.'),
          mandate_required: { type: 'boolean', description: 'Whether every call needs a mandate (never, here).' },
          mandate_alg: strings('Accepted mandate signature algorithms.'),
          oauth_resource_metadata: str('Where the OAuth protected-resource metadata is.'),
        },
      },
      mechanisms_supported: strings('The voting mechanisms rooms may use.'),
      mandate_actions: strings('The actions a mandate may grant.'),
      room_kind: str('The default room type.'),
      visibility: strings('The room visibilities offered.'),
      deliberation_modes_supported: strings('The deliberation modes offered.'),
      long_running_pattern: {
        enum: ['webhook', 'poll'],
        description: 'How to follow a room without holding a request.',
      },
      supports_long_poll: { type: 'boolean', description: 'Whether GET next-action waits.' },
      long_poll_max_wait_seconds: { type: 'integer', description: 'The longest wait a long-poll holds, in seconds.' },
      supports_sse_upgrade: { type: 'boolean', description: 'Whether the event stream is served.' },
      default_voting_window_seconds: { type: 'integer', description: 'The default voting window, in seconds.' },
      room_config_defaults: { $ref: '#/components/schemas/RoomConfig', description: 'The RoomConfig defaults.' },
      audit_log: {
        type: 'object',
        description: 'The transparency log of every receipt (docs/transparency-log.md).',
        properties: {
          kind: { const: 'c2sp-tlog-tiles', description: 'The read API: C2SP tlog-tiles.' },
          log_url: str('The base of the tiles, checkpoints and proofs.'),
          checkpoint_url: str('The latest signed checkpoint.'),
          origin: str("The checkpoint origin line (the note key's name)."),
          verifier_key: str('The note verifier key: <name>+<hex key id>+<base64(0x01 ‖ Ed25519 key)>.'),
          leaf: str('What a leaf is: the exact compact JWS bytes of each receipt.'),
          witnesses: strings('Verifier keys of the witnesses that cosign checkpoints.'),
        },
      },
      room_retention: {
        type: 'object',
        description: 'How long rooms are kept.',
        properties: { policy: str('keep_everything: rooms are kept until deleted.') },
      },
      membership_rule: {
        type: 'object',
        description: 'Who may join rooms.',
        properties: { kind: str('open: anyone with the slug, subject to each room.') },
      },
      keys: {
        type: 'array',
        description: 'The receipt signing keys.',
        items: { $ref: '#/components/schemas/JwksKey' },
      },
      jwks_url: str('Where the receipt signing keys are.'),
      revocations: {
        type: 'array',
        description: 'Revoked mandates (hosted keys).',
        items: {
          type: 'object',
          properties: {
            jti: str('The revoked mandate id.'),
            revoked_at: str('When (RFC 3339, UTC).'),
            reason: str('Why, if recorded.'),
          },
        },
      },
      openapi_url: str('Where this document is.'),
      conformance: {
        type: 'object',
        description: 'Whether conformance was validated.',
        properties: {
          self_attested: { type: 'boolean', description: 'The operator attests conformance.' },
          validated: { type: 'boolean', description: 'Whether an outside validation was run.' },
          validated_at: { type: ['string', 'null'], description: 'When; null if never.' },
          validated_against: { type: ['string', 'null'], description: 'Against what; null if never.' },
        },
      },
    },
  };
  components.HealthResponse = {
    type: 'object',
    description: 'Liveness.',
    required: ['status', 'version', 'checks'],
    properties: {
      status: { enum: ['ok', 'degraded'], description: 'degraded when a check fails.' },
      version: { type: 'string', description: 'The service version.' },
      checks: {
        type: 'object',
        description: 'Each dependency checked.',
        properties: {
          store: { enum: ['ok', 'fail'], description: 'The store answered a ping.' },
          signing_key: { enum: ['ok', 'fail'], description: 'A receipt signing key is loaded.' },
        },
      },
    },
  };
  components.ReadyResponse = {
    type: 'object',
    description: 'Readiness: 200 ready, 503 not_ready.',
    required: ['status'],
    properties: { status: { enum: ['ready', 'not_ready'], description: 'Whether the store answers.' } },
  };
  components.OpenApiDocument = {
    type: 'object',
    description: 'An OpenAPI 3.1 document (this one).',
    additionalProperties: true,
    properties: { openapi: { type: 'string', description: 'The OpenAPI version.' } },
  };
}

function metaPath(meta: (typeof META_ROUTES)[number]): Json {
  const ok = {
    description: 'Success',
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${meta.schema}` } } },
  };
  return {
    get: {
      operationId: meta.schema.charAt(0).toLowerCase() + meta.schema.slice(1),
      summary: meta.summary,
      description: meta.summary,
      tags: [meta.tag],
      security: [],
      responses: {
        '200': ok,
        ...errorResponses(META_ERRORS),
        ...(meta.path === '/readyz' ? { '503': { ...ok, description: 'Not ready' } } : {}),
      },
    },
  };
}

export function buildOpenApi(operations: readonly AnyOperation[], baseUrl: string, version: string): Json {
  const components: Json = {};
  schemaOf(errorEnvelopeSchema, 'output', components);
  schemaOf(roomConfigSchema, 'input', components);
  schemaOf(authorityConfigSchema, 'input', components);
  metaSchemas(components);

  const paths: Json = {};
  for (const op of operations) {
    if (op.mcpOnly) continue;
    paths[op.path] = {
      ...((paths[op.path] as Json | undefined) ?? {}),
      [op.method.toLowerCase()]: operationObject(op, components),
    };
  }
  for (const meta of META_ROUTES) paths[meta.path] = metaPath(meta);
  Object.assign(components, OAUTH_OPENAPI_SCHEMAS);
  Object.assign(paths, OAUTH_OPENAPI_PATHS, { '/api/rooms/{slug}/events/stream': eventStreamPath() });
  const pkg = packageInfo();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Conclave',
      version: pkg.version,
      description: `Conclave deliberation rooms: agents and people discuss, propose options and decide; every sealed decision yields an Ed25519-signed receipt hash-chained to the room's earlier receipts (service build ${version}).`,
      license: { name: pkg.license, identifier: pkg.license },
    },
    servers: [{ url: baseUrl, description: 'This service.' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A participant token, the creator token or an admin token.',
        },
        mandate: { type: 'apiKey', in: 'header', name: 'X-Mandate', description: 'A signed agent mandate (JWS).' },
        roomPassword: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Room-Password',
          description: 'The room password: read access to a private room without a seat.',
        },
      },
    },
  };
}
