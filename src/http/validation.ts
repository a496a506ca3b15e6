/** zod failures as the protocol's input.invalid, naming the field and the operation's route. */
import type { z } from 'zod';
import { invalidInput, type ProtocolError } from '../errors.js';
import type { AnyOperation } from '../operations/types.js';

export function zodToProtocolError(error: z.ZodError, operation: AnyOperation): ProtocolError {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join('.') || 'body';
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
