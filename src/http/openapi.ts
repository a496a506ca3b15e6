/**
 * The live OpenAPI 3.1 document, generated from the operation table's zod schemas (JSON Schema
 * 2020-12 is OpenAPI 3.1's schema dialect) plus the service's fixed meta routes.
 */
import { z } from 'zod';
import { authorityConfigSchema, roomConfigSchema } from '../domain/config.js';
import type { AnyOperation } from '../operations/types.js';
import { OAUTH_OPENAPI_PATHS, OAUTH_OPENAPI_SCHEMAS } from './oauth-openapi.js';

type Json = Record<string, unknown>;

const ERROR_ENVELOPE = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      hint: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
      request_id: z.string().optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

const ERROR_STATUSES = ['400', '401', '403', '404', '409', '413', '429', '500', '503'];

function schemaOf(schema: z.ZodType, io: 'input' | 'output', components: Json): Json {
  const generated = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', reused: 'inline' });
  const json = JSON.parse(JSON.stringify(generated).replaceAll('#/$defs/', '#/components/schemas/')) as Json;
  delete json.$schema;
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

function errorResponses(): Json {
  const responses: Json = {};
  for (const status of ERROR_STATUSES) {
    responses[status] = {
      description: 'Error envelope',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return responses;
}

function pathParams(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function operationObject(op: AnyOperation, components: Json): Json {
  const input = schemaOf(op.input, 'input', components);
  const properties = { ...((input.properties ?? {}) as Json) };
  const required = new Set((input.required ?? []) as string[]);
  for (const p of pathParams(op.path)) {
    delete properties[p.name as string];
    required.delete(p.name as string);
  }
  const parameters: Json[] = pathParams(op.path);
  let requestBody: Json | undefined;
  if (op.inputSource === 'query') {
    for (const [name, schema] of Object.entries(properties)) {
      parameters.push({ name, in: 'query', required: required.has(name), schema });
    }
  } else if (op.inputSource === 'body') {
    const { properties: _p, required: _r, ...rest } = input;
    const body = { ...rest, type: 'object', properties, ...(required.size > 0 ? { required: [...required] } : {}) };
    requestBody = {
      required: false,
      content: { 'application/json': { schema: named(op.requestSchemaName, body, components) } },
    };
  }
  if (op.mutating) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
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
    security: [{}, { bearerAuth: [] }, { mandate: [] }, { roomPassword: [] }],
    responses: {
      '200': { description: 'Success', content: { 'application/json': { schema: output } } },
      ...errorResponses(),
    },
  };
}

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
        { name: 'since_seq', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
        { name: 'since_event_id', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
      ],
      security: [{}, { bearerAuth: [] }, { mandate: [] }, { roomPassword: [] }],
      responses: {
        '200': { description: 'Event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(),
      },
    },
  };
}

const META_ROUTES: { path: string; tag: string; summary: string; schema: string }[] = [
  { path: '/.well-known/svc.json', tag: 'discovery', summary: 'Discovery document', schema: 'DiscoveryDocument' },
  { path: '/.well-known/jwks.json', tag: 'discovery', summary: 'Receipt signing keys (JWKS)', schema: 'Jwks' },
  { path: '/healthz', tag: 'meta', summary: 'Liveness and version', schema: 'HealthResponse' },
  { path: '/readyz', tag: 'meta', summary: 'Readiness', schema: 'ReadyResponse' },
  { path: '/v1/openapi.json', tag: 'meta', summary: 'This OpenAPI document', schema: 'OpenApiDocument' },
];

export function buildOpenApi(operations: readonly AnyOperation[], baseUrl: string, version: string): Json {
  const components: Json = {};
  schemaOf(ERROR_ENVELOPE, 'output', components);
  schemaOf(roomConfigSchema, 'input', components);
  schemaOf(authorityConfigSchema, 'input', components);
  components.JwksKey = {
    type: 'object',
    required: ['kty', 'crv', 'x', 'kid'],
    properties: {
      kty: { const: 'OKP' },
      crv: { const: 'Ed25519' },
      alg: { const: 'EdDSA' },
      use: { const: 'sig' },
      kid: { type: 'string' },
      x: { type: 'string' },
    },
  };
  components.Jwks = {
    type: 'object',
    properties: { keys: { type: 'array', items: { $ref: '#/components/schemas/JwksKey' } } },
  };
  components.DiscoveryDocument = {
    type: 'object',
    additionalProperties: true,
    properties: { protocol_version: { const: '0.1' } },
  };
  components.HealthResponse = {
    type: 'object',
    properties: { status: { enum: ['ok', 'degraded'] }, version: { type: 'string' }, checks: { type: 'object' } },
  };
  components.ReadyResponse = { type: 'object', properties: { status: { enum: ['ready', 'not_ready'] } } };
  components.OpenApiDocument = { type: 'object', additionalProperties: true };

  const paths: Json = {};
  for (const op of operations) {
    if (op.mcpOnly) continue;
    paths[op.path] = {
      ...((paths[op.path] as Json | undefined) ?? {}),
      [op.method.toLowerCase()]: operationObject(op, components),
    };
  }
  for (const meta of META_ROUTES) {
    paths[meta.path] = {
      get: {
        operationId: meta.schema.charAt(0).toLowerCase() + meta.schema.slice(1),
        summary: meta.summary,
        tags: [meta.tag],
        responses: {
          '200': {
            description: 'Success',
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${meta.schema}` } } },
          },
          ...errorResponses(),
        },
      },
    };
  }
  Object.assign(components, OAUTH_OPENAPI_SCHEMAS);
  Object.assign(paths, OAUTH_OPENAPI_PATHS, { '/api/rooms/{slug}/events/stream': eventStreamPath() });
  return {
    openapi: '3.1.0',
    info: { title: 'Conclave', version: '0.1', description: `Conclave deliberation rooms (service build ${version}).` },
    servers: [{ url: baseUrl }],
    tags: ['meta', 'discovery', 'rooms', 'decisions', 'actions', 'events', 'outcomes', 'oauth'].map((name) => ({
      name,
    })),
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        mandate: { type: 'apiKey', in: 'header', name: 'X-Mandate' },
        roomPassword: { type: 'apiKey', in: 'header', name: 'X-Room-Password' },
      },
    },
  };
}
