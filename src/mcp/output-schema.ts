/**
 * A tool's `outputSchema` (docs/agents.md, MCP): the success body one level deep, or the error
 * envelope. The envelope is a short branch here, its fields and codes said once in the catalog
 * instructions rather than in every tool (the v2 SDK client skips the check for `isError` results,
 * but the v1 SDK client validates those too, so the branch must be there). Below the body's own
 * fields a nested object or array keeps its type and nothing else: the REST schema the description
 * names (GET /v1/openapi.json) has every field, and a catalog an agent reads at the start of every
 * session stays small.
 *
 * Only ever loosens the REST schema: a keyword left out accepts more, a `oneOf` becomes an
 * `anyOf` (branches loosened could overlap), and nothing is added but `ok: true`. So every body
 * the REST schema accepts is accepted here.
 */
import { inlined, jsonSchemaOf } from '../operations/json-schema.js';
import type { AnyOperation } from '../operations/types.js';

type JsonSchema = Record<string, unknown>;

/** What a field keeps: its type and exact values, which agents branch on. */
const FIELD_KEYWORDS = ['type', 'const', 'enum'] as const;

function branchesOf(schema: JsonSchema): JsonSchema[] | undefined {
  const branches = schema.anyOf ?? schema.oneOf;
  return Array.isArray(branches) ? (branches as JsonSchema[]) : undefined;
}

/** A field below the body: its type, or `["string", "null"]` for a union of plain types. */
function field(schema: JsonSchema): JsonSchema {
  const branches = branchesOf(schema);
  if (branches) {
    const parts = branches.map(field);
    const plain = parts.every((part) => Object.keys(part).length === 1 && typeof part.type === 'string');
    if (plain) return { type: [...new Set(parts.map((part) => part.type as string))] };
    if (parts.some((part) => Object.keys(part).length === 0)) return {};
    return { anyOf: parts };
  }
  const out: JsonSchema = {};
  for (const keyword of FIELD_KEYWORDS) if (keyword in schema) out[keyword] = schema[keyword];
  return out;
}

/** The body: its own fields (with `ok: true` first), which it requires, and each field's type. */
function body(schema: JsonSchema): JsonSchema {
  const branches = branchesOf(schema);
  if (branches) return { anyOf: branches.map(body) };
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const fields: Record<string, JsonSchema> = { ok: { const: true } };
  for (const [name, value] of Object.entries(properties)) fields[name] ??= field(value);
  return {
    type: 'object',
    properties: fields,
    required: ['ok', ...((schema.required ?? []) as string[]).filter((name) => name !== 'ok')],
  };
}

/** What an `isError` result's structuredContent holds; the instructions describe it in full. */
const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, hint: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
};

export function toolOutputSchema(operation: AnyOperation): JsonSchema {
  const result = inlined(jsonSchemaOf(operation.output, 'output'));
  const reference = operation.responseSchemaName
    ? ` Every field: ${operation.responseSchemaName} in /v1/openapi.json.`
    : '';
  const success = body(result);
  return {
    type: 'object',
    description: `${String(result.description ?? 'The result.')}${reference} With isError: the error envelope.`,
    anyOf: [...((success.anyOf as JsonSchema[] | undefined) ?? [success]), ERROR_ENVELOPE],
  };
}
