/**
 * JSON Schema of an operation's zod schemas, shared by the OpenAPI document and the MCP tool
 * catalogs so both say the same thing.
 *
 * Some fields are parsed loosely by zod and checked later by the handler, whose refusal is worded
 * better than zod's (a room config's unknown keys list the allowed ones; a ballot's shape depends on
 * the room's mechanism). `checkedLater` pairs such a loose schema with the schema that documents
 * what the field really takes, and the documents show the latter.
 */
import { z } from 'zod';

type Json = Record<string, unknown>;

const DOCUMENTED_AS = new WeakMap<z.ZodType, z.ZodType>();

/** `loose` parses the field; `documented` is what the OpenAPI document and the MCP schema show. */
export function checkedLater<T extends z.ZodType>(loose: T, documented: z.ZodType): T {
  DOCUMENTED_AS.set(loose, documented);
  return loose;
}

function rawJsonSchema(schema: z.ZodType, io: 'input' | 'output', documented: Set<z.ZodType>): Json {
  return z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    reused: 'inline',
    override: (ctx) => {
      const stand = DOCUMENTED_AS.get(ctx.zodSchema as unknown as z.ZodType);
      if (!stand) return;
      const json = ctx.jsonSchema as Json;
      const description = json.description;
      for (const key of Object.keys(json)) delete json[key];
      const id = z.globalRegistry.get(stand)?.id;
      if (id) {
        json.$ref = `#/$defs/${id}`;
        documented.add(stand);
      } else {
        const { $schema: _dialect, ...inline } = z.toJSONSchema(stand, { target: 'draft-2020-12', io }) as Json;
        Object.assign(json, inline);
      }
      if (description !== undefined) json.description = description;
    },
  }) as Json;
}

/**
 * The schema with named sub-schemas (zod `meta({id})`) in `$defs`, referenced as `#/$defs/<id>`.
 * The dialect marker is left out: the OpenAPI document and MCP both state their dialect elsewhere.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const documented = new Set<z.ZodType>();
  const { $schema: _dialect, ...json } = rawJsonSchema(schema, io, documented);
  const defs: Json = { ...((json.$defs as Json | undefined) ?? {}) };
  for (const stand of documented) {
    const { $schema: _d, $defs: nested, ...root } = rawJsonSchema(stand, io, documented);
    Object.assign(defs, nested as Json | undefined);
    const id = z.globalRegistry.get(stand)?.id;
    if (id && !(id in defs)) defs[id] = root.$ref === `#/$defs/${id}` ? (nested as Json)[id] : root;
  }
  if (Object.keys(defs).length > 0) json.$defs = defs;
  return json;
}

/** The schema with every `#/$defs/` reference replaced by its definition: one self-contained object. */
export function inlined(json: Json): Json {
  const defs = (json.$defs ?? {}) as Record<string, Json>;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const { $ref, ...rest } = node as Json;
    const out: Json = {};
    if (typeof $ref === 'string' && $ref.startsWith('#/$defs/')) {
      Object.assign(out, walk(defs[$ref.slice('#/$defs/'.length)]) as Json);
    }
    for (const [key, value] of Object.entries(rest)) if (key !== '$defs') out[key] = walk(value);
    return out;
  };
  return walk(json) as Json;
}
