/**
 * Turning the fields a transport collected (REST body/query/path, MCP tool arguments) into an
 * operation's input: the operation's zod schema, the protocol's input.invalid wording, and the
 * deferred-validation rule of room acts. Shared so REST and MCP reject bad input identically.
 */
import type { z } from 'zod';
import { shownTextProblem } from '../domain/shown-text.js';
import { invalidInput, type ProtocolError } from '../errors.js';
import { refuseUnrepresentable } from './json-safety.js';
import type { AnyOperation } from './types.js';

/** Idempotency keys: 1..255 visible ASCII characters (docs/agents.md, The REST loop). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** zod failures as the protocol's input.invalid, naming the field (as the caller spelled it) and the route. */
export function zodToProtocolError(
  error: z.ZodError,
  operation: AnyOperation,
  fieldName: (field: string) => string = (field) => field,
): ProtocolError {
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
  const route = `${operation.method} ${operation.path}`;
  const said = detail.startsWith('is ') || detail.startsWith('contains ') ? detail : `is invalid: ${detail}`;
  return invalidInput(
    field,
    `The field "${field}" ${said} (the ${operation.mcp?.tool ?? operation.name} action / ${route}).`,
    reason,
  );
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
): { input: unknown; invalid: ProtocolError | undefined } {
  refuseUnrepresentable(raw, fieldName);
  const parsed = (operation.input as z.ZodType).safeParse(raw);
  const invalid = parsed.success
    ? shownTextError(operation, parsed.data as Record<string, unknown>, fieldName)
    : zodToProtocolError(parsed.error, operation, fieldName);
  if (!invalid) return { input: parsed.data, invalid: undefined };
  if (!operation.deferValidation) throw invalid;
  return { input: { slug: raw.slug }, invalid };
}
