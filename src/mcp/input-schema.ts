/**
 * A tool's JSON Schema: the operation's zod input as the tool spells it (renamed and fixed fields
 * applied), plus the credential and idempotency arguments. Mandates never appear: they travel in
 * `_meta.mandate`.
 */
import { inlined, jsonSchemaOf } from '../operations/json-schema.js';
import type { AnyOperation } from '../operations/types.js';
import type { ToolArgumentMap } from './tool-arguments.js';

type JsonSchema = Record<string, unknown>;

const TOKEN_ARGUMENT: JsonSchema = {
  type: 'string',
  description:
    'Your credential for this room: the participant_token from join_room, the creator_token from create_room, or an admin token. Calls that need one fail with auth.required without it.',
};

const PASSWORD_ARGUMENT: JsonSchema = {
  type: 'string',
  description: 'The room password, for read-only access to a private room without a seat.',
};

const IDEMPOTENCY_ARGUMENT: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Optional key (1..255 visible ASCII characters) that makes a retry safe: the same key with the same arguments returns the first result without acting again.',
};

export function toolInputSchema(operation: AnyOperation, map: ToolArgumentMap): JsonSchema {
  // Self-contained: every named schema (RoomConfig, …) inlined, so an agent reads one object.
  const json = inlined(jsonSchemaOf(operation.input, 'input'));
  const fieldProperties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const fieldRequired = (json.required ?? []) as string[];
  const argumentOf = Object.fromEntries(Object.entries(map.rename ?? {}).map(([arg, field]) => [field, arg]));
  const hidden = new Set(Object.keys(map.fixed ?? {}));

  const properties: Record<string, JsonSchema> = {};
  for (const [field, schema] of Object.entries(fieldProperties)) {
    if (hidden.has(field)) continue;
    const argument = argumentOf[field] ?? field;
    const declared = map.declared?.[argument];
    properties[argument] = declared ? inlined(jsonSchemaOf(declared, 'input')) : schema;
  }
  if (map.passwordCredential) properties.password = PASSWORD_ARGUMENT;
  properties.token = TOKEN_ARGUMENT;
  if (operation.mutating) properties.idempotency_key = IDEMPOTENCY_ARGUMENT;
  const required = fieldRequired.filter((field) => !hidden.has(field)).map((field) => argumentOf[field] ?? field);

  // A schema-level allOf (CreateRoomRequest: a question or an about text) stays out of the tool's
  // schema: model APIs refuse combinators at the root of a tool's input, and the field descriptions say it.
  const { additionalProperties: _closed, properties: _fields, required: _required, allOf: _also, ...rest } = json;
  return { ...rest, type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}
