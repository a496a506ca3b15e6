/**
 * Turning the fields a transport collected (REST body/query/path, MCP tool arguments) into an
 * operation's input: the operation's zod schema, the protocol's input.invalid wording, and the
 * deferred-validation rule of room acts. Shared so REST and MCP reject bad input identically.
 */
import type { z } from 'zod';
import { invalidInput, type ProtocolError } from '../errors.js';
import { refuseUnrepresentable } from './json-safety.js';
import type { AnyOperation } from './types.js';

/** Idempotency keys: 1..255 visible ASCII characters (01 §6). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** zod failures as the protocol's input.invalid, naming the field (as the caller spelled it) and the route. */
export function zodToProtocolError(
  error: z.ZodError,
  operation: AnyOperation,
  fieldName: (field: string) => string = (field) => field,
): ProtocolError {
  const issue = error.issues[0]!;
  const field = fieldName(issue.path.map(String).join('.') || 'body');
  const route = `${operation.method} ${operation.path}`;
  const reason =
    issue.code === 'invalid_type'
      ? 'wrong_type'
      : issue.code === 'too_big' || issue.code === 'too_small'
        ? 'out_of_range'
        : 'invalid_value';
  const detail =
    issue.code === 'invalid_type' && issue.input === undefined
      ? 'is required'
      : issue.message.replace(/^Invalid input: /, '');
  return invalidInput(
    field,
    `The field "${field}" ${detail.startsWith('is ') ? detail : `is invalid: ${detail}`} (the ${operation.mcp?.tool ?? operation.name} action / ${route}).`,
    reason,
  );
}

/**
 * Parses the raw fields with the operation's input schema. A value JCS could not carry is a body-parsing
 * failure (01 §9 step 4), thrown at once. A schema failure is thrown at once too, except for
 * operations that defer validation (room acts check terminal state and authority first): those get
 * the error handed over together with just the slug.
 */
export function parseOperationInput(
  operation: AnyOperation,
  raw: Record<string, unknown>,
  fieldName?: (field: string) => string,
): { input: unknown; invalid: ProtocolError | undefined } {
  refuseUnrepresentable(raw, fieldName);
  const parsed = (operation.input as z.ZodType).safeParse(raw);
  if (parsed.success) return { input: parsed.data, invalid: undefined };
  const invalid = zodToProtocolError(parsed.error, operation, fieldName);
  if (!operation.deferValidation) throw invalid;
  return { input: { slug: raw.slug }, invalid };
}
