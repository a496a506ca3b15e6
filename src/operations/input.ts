/**
 * Turning the fields a transport collected (REST body/query/path, MCP tool arguments) into an
 * operation's input: the operation's zod schema, the protocol's input.invalid wording, and the
 * deferred-validation rule of room acts. Shared so REST and MCP reject bad input identically.
 */
import { type z, ZodObject } from 'zod';
import { shownTextProblem } from '../domain/shown-text.js';
import { nearestKey, unknownKeysError } from '../domain/unknown-keys.js';
import { invalidInput, type ProtocolError } from '../errors.js';
import { refuseUnrepresentable } from './json-safety.js';
import type { AnyOperation } from './types.js';

/** Idempotency keys: 1..255 visible ASCII characters (docs/agents.md, The REST loop). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * An act's input schema with unknown keys refused (docs/agents.md, The REST loop): the room config's rule,
 * applied to every write so that a misspelt field is never dropped while the act succeeds without it.
 * Reads keep their open schemas (a stray query parameter changes nothing). Only misspellings reach it:
 * withoutForeignKeys has set aside the keys that are no slip of an allowed one.
 */
const STRICT_INPUTS = new WeakMap<AnyOperation, z.ZodType>();
function inputSchemaOf(operation: AnyOperation): z.ZodType {
  if (!operation.mutating || !(operation.input instanceof ZodObject)) return operation.input as z.ZodType;
  let strict = STRICT_INPUTS.get(operation);
  if (!strict) {
    strict = operation.input.strict();
    STRICT_INPUTS.set(operation, strict);
  }
  return strict;
}

/**
 * The act's input without the unknown top-level keys that are nobody's misspelling: the protocol
 * ignores unknown request fields (forward compatibility: a client may send a field a later version
 * defines), so only a key close to an allowed one (unknown-keys.ts, nearestKey: "stnace", "displayName")
 * is refused, since that one is almost surely an allowed field the act would otherwise run without.
 * A rule of this service beyond the protocol's text, said in docs/agents.md, The REST loop.
 */
function withoutForeignKeys(
  operation: AnyOperation,
  raw: Record<string, unknown>,
  fieldName: (field: string) => string,
  allowed: readonly string[] = acceptedKeys(operation),
): Record<string, unknown> {
  if (!operation.mutating || !(operation.input instanceof ZodObject)) return raw;
  const shape = operation.input.shape as Record<string, unknown>;
  let kept: Record<string, unknown> | undefined;
  for (const key of Object.keys(raw)) {
    if (key in shape || nearestKey(fieldName(key), allowed) !== undefined) continue;
    kept ??= { ...raw };
    delete kept[key];
  }
  return kept ?? raw;
}

/** The keys an act accepts, as the caller spells them: every input field but the path parameters (REST). */
export function acceptedKeys(operation: AnyOperation): string[] {
  const shape = operation.input instanceof ZodObject ? Object.keys(operation.input.shape) : [];
  const pathParameters = new Set([...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!));
  return shape.filter((key) => !pathParameters.has(key));
}

/** zod failures as the protocol's input.invalid, naming the field (as the caller spelled it) and the route. */
export function zodToProtocolError(
  error: z.ZodError,
  operation: AnyOperation,
  fieldName: (field: string) => string = (field) => field,
  allowed: readonly string[] = acceptedKeys(operation),
): ProtocolError {
  // An unknown key first: it is often the misspelling of a required field the next issue misses.
  const unknown = error.issues.find((issue) => issue.code === 'unrecognized_keys' && issue.path.length === 0);
  if (unknown?.code === 'unrecognized_keys') {
    const keys = unknown.keys.map(fieldName);
    return unknownKeysError(keys[0]!, keys, allowed, `the ${actionName(operation)}`);
  }
  const issue = error.issues[0]!;
  const field = fieldName(issue.path.map(String).join('.') || 'body');
  return fieldError(
    field,
    issue.code === 'invalid_type' && issue.input === undefined
      ? 'is required'
      : issue.message.replace(/^Invalid input: /, ''),
    operation,
    issue.code === 'invalid_type'
      ? 'wrong_type'
      : issue.code === 'too_big' || issue.code === 'too_small'
        ? 'out_of_range'
        : 'invalid_value',
  );
}

/** The protocol's input.invalid for `field`, worded "The field "x" is …" and naming the route. */
function fieldError(field: string, detail: string, operation: AnyOperation, reason: string): ProtocolError {
  const said = detail.startsWith('is ') || detail.startsWith('contains ') ? detail : `is invalid: ${detail}`;
  return invalidInput(field, `The field "${field}" ${said} (the ${actionName(operation)}).`, reason);
}

/** "discuss action / POST /api/rooms/{slug}/discuss": the act and its route, as refusals name them. */
function actionName(operation: AnyOperation): string {
  return `${operation.mcp?.tool ?? operation.name} action / ${operation.method} ${operation.path}`;
}

/**
 * The texts other agents are shown (the operation's `shownText` fields), checked after the schema
 * so each is known to be a string or a string array: the first refusal, or undefined.
 */
function shownTextError(
  operation: AnyOperation,
  input: Record<string, unknown>,
  fieldName: (field: string) => string,
): ProtocolError | undefined {
  for (const [field, kind] of Object.entries(operation.shownText ?? {})) {
    const value = input[field];
    const texts: [string, unknown][] = Array.isArray(value)
      ? value.map((text, index) => [`${field}.${index}`, text])
      : [[field, value]];
    for (const [path, text] of texts) {
      if (typeof text !== 'string') continue;
      const problem = shownTextProblem(text, kind);
      if (problem) return fieldError(fieldName(path), problem.message, operation, 'invalid_value');
    }
  }
  return undefined;
}

/**
 * Parses the raw fields with the operation's input schema. A value JCS could not carry is a body-parsing
 * failure (docs/architecture.md, Errors), thrown at once. A schema failure is thrown at once too, except for
 * operations that defer validation (room acts check terminal state and authority first): those get
 * the error handed over together with just the slug. The texts others are shown are field checks too,
 * made once the schema passed.
 */
export function parseOperationInput(
  operation: AnyOperation,
  raw: Record<string, unknown>,
  fieldName: (field: string) => string = (field) => field,
  allowed?: readonly string[],
): { input: unknown; invalid: ProtocolError | undefined } {
  refuseUnrepresentable(raw, fieldName);
  const parsed = inputSchemaOf(operation).safeParse(withoutForeignKeys(operation, raw, fieldName, allowed));
  const invalid = parsed.success
    ? shownTextError(operation, parsed.data as Record<string, unknown>, fieldName)
    : zodToProtocolError(parsed.error, operation, fieldName, allowed);
  if (!invalid) return { input: parsed.data, invalid: undefined };
  if (!operation.deferValidation) throw invalid;
  return { input: { slug: raw.slug }, invalid };
}
