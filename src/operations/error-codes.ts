/**
 * The error codes each operation can answer with, derived from what the operation is: every call can
 * be invalid, rate limited or meet a failing store; a room route can meet a missing room; a credential
 * can be wrong; a mandate can fail its checks; a mutation can reuse an idempotency key; and each act
 * adds the refusals of the room state it touches. The OpenAPI document lists these per operation.
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import type { AnyOperation } from './types.js';

const EVERY_CALL: readonly ErrorCode[] = [
  'input.invalid',
  'rate_limit.exceeded',
  'internal.error',
  'vendor:conclave:unavailable',
];

const CREDENTIALS: readonly ErrorCode[] = [
  'auth.required',
  'auth.invalid_token',
  'participant.token_superseded',
  'auth.invalid_password',
  'auth.mandate_required',
  'auth.mandate_not_accepted',
  'room.join_required',
  'authority.denied',
];

const MANDATE: readonly ErrorCode[] = [
  'mandate.malformed',
  'mandate.issuer_untrusted',
  'mandate.signature_invalid',
  'mandate.expired',
  'mandate.not_yet_valid',
  'mandate.room_not_in_scope',
  'mandate.action_not_in_scope',
  'mandate.weight_cap_exceeded',
  'mandate.rate_cap_exceeded',
  'mandate.revoked',
];

const DECISION_ACT: readonly ErrorCode[] = [
  'room.concluded',
  'decision.not_open',
  'decision.not_found',
  'decision.proposing',
];

/** The room-state refusals of each operation, beyond the derived ones. */
const ROOM_STATE: Readonly<Record<string, readonly ErrorCode[]>> = {
  joinRoom: ['room.concluded', 'room.invite_required', 'room.at_capacity', 'invite.invalid'],
  ask: ['room.concluded', 'decision.already_open', 'choice.not_eligible'],
  startChoosing: DECISION_ACT,
  discuss: DECISION_ACT,
  propose: [...DECISION_ACT, 'choice.invalid_option'],
  choose: [...DECISION_ACT, 'choice.invalid_option', 'choice.not_eligible'],
  chooseByGet: [...DECISION_ACT, 'choice.invalid_option', 'choice.not_eligible'],
  abstain: [...DECISION_ACT, 'choice.not_eligible'],
  closeRoom: ['room.concluded', 'decision.already_open'],
  createInvite: ['room.concluded'],
  revokeInvite: ['invite.invalid', 'vendor:conclave:not_found'],
  updateMemberRole: ['room.concluded', 'vendor:conclave:not_found'],
  updateRoomSettings: ['room.concluded'],
  deleteRoom: ['vendor:conclave:not_found'],
  unregisterWebhook: ['vendor:conclave:not_found'],
};

export function errorCodes(operation: AnyOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>([...EVERY_CALL, ...CREDENTIALS, ...MANDATE]);
  if (operation.path.includes('{slug}')) codes.add('room.not_found');
  if (operation.mutating) codes.add('idempotency.conflict');
  for (const code of ROOM_STATE[operation.name] ?? []) codes.add(code);
  return [...codes];
}

/** The error envelope every REST error and every failed MCP tool call carries. */
export const errorEnvelopeSchema = z
  .object({
    error: z
      .object({
        code: z
          .enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]])
          .describe('Stable, dotted error code; branch on this, not on the message.'),
        message: z.string().describe('What went wrong and what to do about it, in a sentence an agent can act on.'),
        hint: z.string().optional().describe('A further suggestion, when there is one.'),
        details: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('Machine-readable specifics: field and reason for input.invalid, limits, allowed keys, …'),
        request_id: z.string().optional().describe('The request id, also in the X-Request-Id response header.'),
      })
      .describe('The error.'),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Every REST error, and every failed MCP tool call, is this envelope.' });
