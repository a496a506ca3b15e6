/**
 * Errors as an MCP agent must read them. The operations word their refusals for REST, naming headers
 * (Authorization: Bearer, X-Mandate, X-Room-Password, Idempotency-Key) that a tool call cannot send;
 * over MCP the same credential travels as the `token`, `password` or `idempotency_key` argument and a
 * mandate in the request's `_meta.mandate`. The code and details stay as they are (REST parity), and
 * the message and hint name the MCP way to fix the call.
 */
import type { ErrorCode, ErrorSpec } from '../errors.js';

const REWORDINGS: readonly [RegExp, string][] = [
  [/Authorization: Bearer <admin token>/g, 'the admin token as the token argument'],
  [/(?:send |with )?Authorization: Bearer(?: <[^>]+>)?/g, 'pass the token argument'],
  [/the mandate in X-Mandate \(REST\) or _meta\.mandate \(MCP\)/g, 'the mandate in the request _meta.mandate'],
  [/(?:a mandate in |in )?X-Mandate/g, 'the request _meta.mandate'],
  [/X-Room-Password/g, 'the password argument'],
  [/Idempotency-Key/g, 'idempotency_key'],
];

/** What to do about a credential refusal, in tool-call terms. */
const HINTS: Partial<Record<ErrorCode, string>> = {
  'auth.required':
    'Pass your participant_token (from join_room) or creator_token (from create_room) as the token argument, or a mandate in _meta.mandate.',
  'auth.invalid_token':
    'The token argument is not a credential of this room: pass the participant_token join_room returned, or call join_room again.',
  'participant.token_superseded':
    'This seat was reconnected and its old token retired: pass the newest participant_token as the token argument.',
  'auth.invalid_password': 'Pass the correct room password as the password argument.',
  'auth.mandate_required': 'This room needs a mandate: send it in the request _meta.mandate.',
  'auth.mandate_not_accepted':
    'This room takes participant tokens only: drop _meta.mandate and pass the token argument.',
  'idempotency.conflict': 'Use a fresh idempotency_key for a new request, or resend the original arguments.',
};

function reword(text: string): string {
  return REWORDINGS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}

export function forMcp(spec: ErrorSpec): ErrorSpec {
  const hint = HINTS[spec.code] ?? (spec.hint !== undefined ? reword(spec.hint) : undefined);
  return { ...spec, message: reword(spec.message), ...(hint !== undefined ? { hint } : {}) };
}
