/**
 * The live OpenAPI 3.1 document, generated from the operation table's zod schemas (JSON Schema
 * 2020-12 is OpenAPI 3.1's schema dialect) plus the service's fixed meta routes.
 */
import { z } from 'zod';
import {
  authorityConfigSchema,
  resolvedRoomConfigSchema,
  roomConfigSchema,
  roomSettingsPatchSchema,
} from '../domain/config.js';
import { ROOM_EVENT_COMPONENTS } from '../domain/views/event-schemas.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { errorCodes, errorEnvelopeSchema } from '../operations/error-codes.js';
import { jsonSchemaOf } from '../operations/json-schema.js';
import { openEventStream } from '../operations/open-event-stream.js';
import type { AnyOperation } from '../operations/types.js';
import { packageInfo } from '../package-info.js';
import { LOG_OPENAPI_SCHEMAS, logOpenApiPaths } from './log-openapi.js';
import { META_OPENAPI_SCHEMAS, metaOpenApiPaths, PROTOCOL_VERSION } from './meta-openapi.js';
import { RESPONSE_EXAMPLES } from './openapi-examples.js';
import { OAUTH_OPENAPI_SCHEMAS, oauthOpenApiPaths } from './oauth-openapi.js';

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
  // The input's metadata beyond its id (a description, a schema-level anyOf) applies to the body too.
  const { id: _id, description, ...meta } = z.globalRegistry.get(op.input) ?? {};
  const input =
    op.input instanceof z.ZodObject
      ? z
          .object(Object.fromEntries(Object.entries(op.input.shape).filter(([key]) => !inPath.has(key))))
          .meta({ ...meta, description: description ?? op.summary })
      : op.input;
  const json = schemaOf(input, 'input', components);
  const { properties = {}, required = [], ...rest } = json as { properties?: Json; required?: string[] };
  return { properties, required: required.filter((name) => !inPath.has(name)), rest };
}

/** Operations whose answer has several shapes show one named example of each. */
const EXAMPLE_VARIANTS: Record<string, Record<string, { summary: string; from: string }>> = {
  getRoom: {
    agentView: { summary: 'The agent view (default)', from: 'getRoom' },
    fullState: { summary: 'The full state (include=full, operator)', from: 'getRoomFull' },
  },
};

/** The 2xx example: the operation's own, else the one captured by scripts/openapi-examples.ts. */
function responseExample(op: AnyOperation): Json {
  const variants = EXAMPLE_VARIANTS[op.name];
  if (variants) {
    return {
      examples: Object.fromEntries(
        Object.entries(variants).map(([key, { summary, from }]) => [key, { summary, value: RESPONSE_EXAMPLES[from] }]),
      ),
    };
  }
  const example = op.example.output ?? RESPONSE_EXAMPLES[op.name];
  return example ? { example } : {};
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
          'application/json': { schema: output, ...responseExample(op) },
        },
      },
      ...errorResponses(errorCodes(op)),
    },
  };
}

/** RoomEvent is a union on event_type: the discriminator tells generators which member to read. */
function discriminateRoomEvents(components: Json): void {
  const union = components.RoomEvent as Json | undefined;
  if (!union) return;
  union.discriminator = {
    propertyName: 'event_type',
    mapping: Object.fromEntries(
      Object.entries(ROOM_EVENT_COMPONENTS).map(([type, name]) => [type, `#/components/schemas/${name}`]),
    ),
  };
}

/** Room routes take any of the credentials, or none for what is public (a public room's reads). */
const SECURITY = [{}, { bearerAuth: [] }, { mandate: [] }, { roomPassword: [] }];

const STREAM_EXAMPLE = [
  'id: 6c1f2d7a-0b5e-4f3c-9a8d-2e4b6c8d0f12',
  'event: choice.abstained',
  `data: ${JSON.stringify({
    id: '6c1f2d7a-0b5e-4f3c-9a8d-2e4b6c8d0f12',
    seq: 17,
    event_type: 'choice.abstained',
    occurred_at: '2026-05-01T10:05:00.000Z',
    decision_id: '9b2e6f0a-4c1d-4e8b-a3f5-7d2c1e0b9a84',
    data: {
      seq: 2,
      participant_id: '5f0c8a9e-3b1d-4c51-9d7a-2e6f4b8c1a07',
      display_name: 'planner-agent',
      reason: 'I have a conflict of interest.',
    },
  })}`,
  '',
  ': keep-alive',
  '',
  '',
].join('\n');

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
          content: {
            'text/event-stream': {
              schema: { type: 'string', description: 'SSE frames of RoomEvents.' },
              example: STREAM_EXAMPLE,
            },
          },
        },
        ...errorResponses(READ_ERRORS),
      },
    },
  };
}

/** The stream's checks are an operation outside the table (operations/open-event-stream.ts): its codes. */
const READ_ERRORS: readonly ErrorCode[] = errorCodes(openEventStream);

const TAGS: Record<string, string> = {
  meta: 'Service health and this document.',
  discovery: 'What the service offers and the keys its receipts are signed with.',
  rooms: 'Creating, reading, joining and administering rooms.',
  decisions: 'Opening decisions and following them to their sealed outcome.',
  actions: 'What a seat does in a room: discuss, propose, choose, abstain.',
  events: 'Replaying and following what happens in a room: events, long-poll, webhooks.',
  outcomes: 'Outcomes and their signed, hash-chained receipts.',
  oauth: 'The OAuth device flow that hands agents a credential.',
  log: 'The transparency log of every receipt (docs/transparency-log.md): checkpoints, tiles and proofs, public.',
};

export function buildOpenApi(operations: readonly AnyOperation[], baseUrl: string, version: string): Json {
  const components: Json = {};
  schemaOf(errorEnvelopeSchema, 'output', components);
  schemaOf(resolvedRoomConfigSchema, 'output', components);
  schemaOf(roomConfigSchema, 'input', components);
  schemaOf(roomSettingsPatchSchema, 'input', components);
  schemaOf(authorityConfigSchema, 'input', components);
  Object.assign(components, META_OPENAPI_SCHEMAS, OAUTH_OPENAPI_SCHEMAS, LOG_OPENAPI_SCHEMAS);

  const paths: Json = {};
  for (const op of operations) {
    if (op.mcpOnly) continue;
    paths[op.path] = {
      ...((paths[op.path] as Json | undefined) ?? {}),
      [op.method.toLowerCase()]: operationObject(op, components),
    };
  }
  Object.assign(
    paths,
    { '/api/rooms/{slug}/events/stream': eventStreamPath() },
    metaOpenApiPaths(errorResponses),
    oauthOpenApiPaths(errorResponses),
    logOpenApiPaths(errorResponses),
  );
  discriminateRoomEvents(components);
  const pkg = packageInfo();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Conclave',
      // The protocol's version, which clients compare; the build is named in the description.
      version: PROTOCOL_VERSION,
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
