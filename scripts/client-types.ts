/**
 * Writes src/client/types/generated.ts, the client package's wire types, from the one source the
 * OpenAPI document and the MCP tool schemas also come from: the operation table's zod schemas
 * (docs/architecture.md, Client library and command line). It builds the live OpenAPI document in-process
 * (src/http/openapi.ts), gives a component name to what the document only describes inline (query
 * parameters, the OAuth bodies, the MCP-only operations' answers), and hands the components to
 * openapi-typescript, which writes one named type per schema with the descriptions as JSDoc.
 *
 * `npm run client-types` regenerates the file; test/client/generated-types.test.ts fails when the
 * committed file is stale. The output depends only on the schemas: no base URL, version or date.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import type ts from 'typescript';
import { buildOpenApi } from '../src/http/openapi.js';
import { jsonSchemaOf } from '../src/operations/json-schema.js';
import { OPERATIONS } from '../src/operations/table.js';

type Json = Record<string, unknown>;
type OpenApiDocument = { paths: Record<string, Record<string, Json>>; components: { schemas: Json } };

/** The live document, as the service serves it; its base URL and version do not reach the types. */
export const liveOpenApi = (): OpenApiDocument =>
  buildOpenApi(OPERATIONS, 'https://conclave.invalid', 'client-types') as OpenApiDocument;

const repoRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_TYPES_PATH = path.join(repoRoot, 'src', 'client', 'types', 'generated.ts');
export const CLIENT_TYPES_COMMAND = 'npm run client-types';

const REF = '#/components/schemas/';
const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A zod schema's JSON Schema as a component, its named sub-schemas as components beside it. */
function addZodComponent(schemas: Json, name: string, schema: Parameters<typeof jsonSchemaOf>[0]): void {
  const json = JSON.parse(JSON.stringify(jsonSchemaOf(schema, 'output')).replaceAll('#/$defs/', REF)) as Json & {
    $defs?: Json;
  };
  const { $defs = {}, ...root } = json;
  for (const [id, def] of Object.entries($defs)) schemas[id] ??= def;
  if (root.$ref !== `${REF}${name}`) schemas[name] ??= root;
}

/** The JSON answer or body schema of an operation object, if it has one. */
function jsonContent(holder: unknown): Json | undefined {
  const content = isJson(holder) && isJson(holder.content) ? holder.content['application/json'] : undefined;
  return isJson(content) && isJson(content.schema) ? content.schema : undefined;
}

/**
 * The components the client names: the document's own, plus a name for each inline request body,
 * query, and JSON answer (`<OperationId>Request`, `<OperationId>Response`), and the answers of the
 * operations only MCP serves.
 */
function clientComponents(doc: OpenApiDocument): Json {
  const schemas = structuredClone(doc.components.schemas);

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const operation of Object.values(item)) {
      const id = pascal(String(operation.operationId));
      const body = jsonContent(operation.requestBody);
      if (body && typeof body.$ref !== 'string') schemas[`${id}Request`] ??= structuredClone(body);
      const query = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
      if (!body && query.length > 0 && !(`${id}Request` in schemas)) {
        schemas[`${id}Request`] = {
          type: 'object',
          description: `The query of ${String(operation.operationId)}: ${String(operation.summary ?? '')}.`,
          properties: Object.fromEntries(
            query.map((p) => [p.name, { ...(p.schema as Json), description: p.description }]),
          ),
          required: query.filter((p) => p.required === true).map((p) => p.name),
          additionalProperties: false,
        };
      }
      addPathComponents(schemas, id, String(operation.operationId), path, (operation.parameters ?? []) as Json[]);
      const answer = jsonContent((operation.responses as Json | undefined)?.['200']);
      if (answer && typeof answer.$ref !== 'string') schemas[`${id}Response`] ??= structuredClone(answer);
    }
  }
  for (const op of OPERATIONS) {
    if (op.mcpOnly) addZodComponent(schemas, op.responseSchemaName ?? `${pascal(op.name)}Response`, op.output);
  }
  return schemas;
}

/**
 * The path parameters of the room routes, described as the document describes them: `RoomPath`
 * (the slug, shared by every room route) and `<OperationId>Path` for a route's others (an invite
 * code, a webhook id), so a client method's every parameter shows its description.
 */
function addPathComponents(schemas: Json, id: string, operationId: string, path: string, parameters: Json[]): void {
  if (!path.startsWith('/api/rooms/{slug}')) return;
  const described = (p: Json) => ({ ...(p.schema as Json), description: p.description });
  const inPath = parameters.filter((p) => p.in === 'path');
  const slug = inPath.find((p) => p.name === 'slug');
  if (slug) {
    schemas.RoomPath ??= {
      type: 'object',
      description: 'The room a room route acts on.',
      properties: { slug: described(slug) },
      required: ['slug'],
      additionalProperties: false,
    };
  }
  const others = inPath.filter((p) => p.name !== 'slug');
  if (others.length === 0) return;
  schemas[`${id}Path`] ??= {
    type: 'object',
    description: `The path parameters of ${operationId} besides the room slug.`,
    properties: Object.fromEntries(others.map((p) => [p.name, described(p)])),
    required: others.map((p) => p.name),
    additionalProperties: false,
  };
}

/**
 * Names the client has always exported for parts of the generated types: a renamed component, an
 * element of an array, a non-null member, an enum. Each is emitted only while no component has the
 * name, so a schema that later names the part itself (zod `meta({ id })`) takes over.
 */
const ALIASES: [name: string, type: string, doc: string][] = [
  ['Outcome', 'OutcomeResponse', 'GET /api/rooms/{slug}/outcome: the decisions in seal order with their receipts.'],
  ['AskedDecision', 'AskDecision', 'A just-opened decision.'],
  ['CloseRoomRequest', 'CloseRequest', 'POST /api/rooms/{slug}/close.'],
  ['CloseRoomResponse', 'CloseResponse', 'The closed room and its conclusion receipt.'],
  ['Health', 'HealthResponse', 'GET /healthz.'],
  ['ServiceDocument', 'DiscoveryDocument', 'GET /.well-known/svc.json.'],
  ['JsonWebKeySet', 'Jwks', 'GET /.well-known/jwks.json: every key that ever signed a receipt.'],
  ['DeviceAuthorization', 'DeviceAuthorizationResponse', 'POST /oauth/device_authorization.'],
  ['DeviceToken', 'DeviceTokenResponse', 'POST /oauth/token once approved: a hosted key and its mandate.'],
  [
    'DecisionOpening',
    "Pick<DecisionSummary, 'id' | 'seq' | 'question' | 'context' | 'options' | 'eligible_participant_ids'>",
    'The fields that name a decision and its slate.',
  ],
  [
    'SealFields',
    "Pick<DecisionSummary, 'resolved_at' | 'resolved_outcome' | 'resolved_winner' | 'outcome_status' | 'prev_hash' | 'receipt_hash'>",
    'How a decision sealed and where it sits in the receipt chain: all null before it seals.',
  ],
  ['RoomStatus', "AgentRoomView['status']", "A room's phase."],
  ['DecisionStatus', "DecisionSummary['status']", "A decision's phase."],
  ['OutcomeStatus', "NonNullable<DecisionSummary['outcome_status']>", 'How a sealed decision came out.'],
  ['Role', "AgentRoomView['role']", 'A seat that chooses, or one that only reads.'],
  ['Stance', "NonNullable<DiscussRequest['stance']>", "A discussion message's stance."],
  ['InviteStatus', "RoomInvite['status']", "An invite's state."],
  ['Mechanism', "RoomConfig['mechanism']", 'The voting mechanisms the service runs.'],
  ['EventType', "RoomEvent['event_type']", 'The types of room events.'],
  ['Choice', "ChooseRequest['choice']", 'A ballot; its shape depends on the mechanism.'],
  ['DecisionSelector', "NonNullable<DiscussRequest['decision']>", "A decision's number in its room."],
  [
    'OAuthErrorCode',
    "OAuthError['error']",
    'The flat OAuth errors of the device-authorization endpoints (RFC 6749, RFC 8628).',
  ],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source text, a template literal type
  ['ProtocolErrorCode', "Exclude<ErrorEnvelope['error']['code'], `vendor:${string}`>", "The protocol's error codes."],
];

/** Type aliases: node names openapi-typescript emits that are not the client's (its `paths`, `operations`, …). */
const DROPPED = new Set(['paths', 'webhooks', 'operations', '$defs']);

function nameOf(node: ts.Node): string | undefined {
  const name = (node as { name?: { text?: string } }).name;
  return name?.text;
}

/** The text of src/client/types/generated.ts for `doc` (by default, the live document). */
export async function renderClientTypes(doc: OpenApiDocument = liveOpenApi()): Promise<string> {
  const schemas = clientComponents(doc);
  const nodes = await openapiTS(
    {
      openapi: '3.1.0',
      info: { title: 'Conclave client types', version: '0' },
      paths: {},
      components: { schemas },
    } as Parameters<typeof openapiTS>[0],
    {
      rootTypes: true,
      rootTypesNoSchemaPrefix: true,
      additionalProperties: false,
      defaultNonNullable: false,
      exportType: false,
    },
  );
  const kept = nodes.filter((node) => !DROPPED.has(nameOf(node) ?? ''));
  const body = astToString(kept)
    .replace(/^export interface components /m, 'interface components ')
    .replace(/^export type (\w+) = components\['schemas'\]\['\w+'\];$/gm, (line, name: string) => {
      const description = (schemas[name] as Json | undefined)?.description;
      return typeof description === 'string' ? `${jsDoc(description)}\n${line}` : line;
    });
  const aliases = ALIASES.filter(([name]) => !(name in schemas)).map(
    ([name, type, doc]) => `${jsDoc(doc)}\nexport type ${name} = ${type};`,
  );
  const text = [
    '/**',
    ' * GENERATED by scripts/client-types.ts from the operation schemas (the OpenAPI document’s components);',
    ` * do not edit by hand: change the schemas, then run \`${CLIENT_TYPES_COMMAND}\`.`,
    ' */',
    '',
    body,
    '// Names for parts of the types above.',
    ...aliases,
    '',
  ].join('\n');
  return format(text);
}

/** A one-line JSDoc comment of `text`. */
function jsDoc(text: string): string {
  return `/** ${text.replaceAll('*/', '*\\/').replace(/\s+/g, ' ').trim()} */`;
}

/** The repository's formatter, so the committed file passes `npm run lint` as generated. */
function format(text: string): string {
  const biome = path.join(repoRoot, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  return execFileSync(process.execPath, [biome, 'format', `--stdin-file-path=${CLIENT_TYPES_PATH}`], {
    cwd: repoRoot,
    input: text,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(CLIENT_TYPES_PATH, await renderClientTypes());
  console.log(`wrote ${path.relative(repoRoot, CLIENT_TYPES_PATH)}`);
}
