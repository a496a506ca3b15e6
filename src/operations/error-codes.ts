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
  closeRoom: ['room.concluded', 'decision.not_open'],
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

const int = (description: string) => z.number().int().describe(description);
const openDecisions = z
  .array(
    z.object({
      seq: int('The decision number.'),
      question: z.string().describe('Its question.'),
    }),
  )
  .describe('decision.not_found, decision.not_open, decision.already_open: the open decisions, oldest first.');

/**
 * The fields `error.details` can carry, each named by the codes that set it (the protocol's code table;
 * docs/architecture.md, Errors). Closed: a new detail field is added here too, and the e2e suites
 * validate every error they receive against it.
 */
export const errorDetailsSchema = z
  .object({
    field: z.string().optional().describe('input.invalid: the offending field, query parameter, header or "body".'),
    reason: z
      .string()
      .optional()
      .describe(
        'input.invalid: why (unknown_keys, immutable_key, out_of_range, wrong_type, ballot_shape, duplicate_in_ranking, deliberation_disabled, message_cap_reached, option_cap_reached, empty_slate, agreement_not_supported, abstain_on_agreement, reserved_mechanism, unknown_mechanism, confirmation_mismatch, credential_in_url, webhook_url_rejected, webhook_cap_reached, webhook_seat_cap_reached, webhook_origin_cap_reached, lookalike, …); mandate.*: what failed; invite.invalid: why the invite is refused.',
      ),
    allowed_keys: z
      .array(z.string())
      .optional()
      .describe('input.invalid with reason unknown_keys: the keys that are accepted.'),
    cap: int('input.invalid with reason message_cap_reached or webhook_*cap_reached: the cap reached.').optional(),
    origin: z
      .string()
      .optional()
      .describe('input.invalid with reason webhook_origin_cap_reached: the receiving origin (scheme://host:port).'),
    like_option: int(
      'input.invalid with reason lookalike on options: the number of the option already there that the offered text reads the same as.',
    ).optional(),
    like_name: z
      .string()
      .optional()
      .describe(
        'input.invalid with reason lookalike on a display name or invite label: the seat name already in the room (a seat or a pending invite) that the offered name reads the same as.',
      ),
    total: int(
      'input.invalid with reason out_of_range on options: the characters the options would hold together (limit is the most allowed).',
    ).optional(),
    slug: z
      .string()
      .optional()
      .describe('room.not_found, room.join_required, room.invite_required, room.concluded: the room slug.'),
    visibility: z
      .enum(['public', 'unlisted', 'private'])
      .optional()
      .describe('room.join_required: the room visibility.'),
    join_required: z.literal(true).optional().describe('room.join_required: always true.'),
    password_supported: z
      .boolean()
      .optional()
      .describe('room.join_required, room.invite_required: whether the room has a password.'),
    concluded_at: z
      .string()
      .nullable()
      .optional()
      .describe('room.concluded: when the room was closed (RFC 3339, UTC).'),
    max_participants: int('room.at_capacity: the seat limit.').optional(),
    participant_id: z.string().optional().describe('participant.token_superseded: the seat whose token was rotated.'),
    auth: z
      .enum(['mandate_required', 'token_only'])
      .optional()
      .describe('auth.mandate_required, auth.mandate_not_accepted: what the room accepts.'),
    check: z
      .enum(['parse', 'issuer', 'signature', 'time', 'room', 'action', 'weight', 'rate', 'revocation'])
      .optional()
      .describe('mandate.*: the check that failed.'),
    iss: z.string().optional().describe('mandate.issuer_untrusted: the issuer.'),
    exp: z.number().optional().describe('mandate.expired: the mandate expiry (Unix seconds).'),
    nbf: z.number().optional().describe('mandate.not_yet_valid: when the mandate becomes valid (Unix seconds).'),
    action: z.string().optional().describe('mandate.action_not_in_scope: the action asked for.'),
    weight_cap: z.number().optional().describe('mandate.weight_cap_exceeded: the cap.'),
    requested: z.number().optional().describe('mandate.weight_cap_exceeded: the weight asked for.'),
    scope: z.string().optional().describe('rate_limit.exceeded: what was limited (ip, credential, guess, room, …).'),
    bucket: z.string().optional().describe('rate_limit.exceeded: the limiter bucket, when there are several.'),
    limit: int('rate_limit.exceeded, mandate.rate_cap_exceeded: the limit.').optional(),
    window_seconds: z
      .number()
      .optional()
      .describe('rate_limit.exceeded, mandate.rate_cap_exceeded: the window of the limit, in seconds.'),
    retry_after_seconds: int(
      'rate_limit.exceeded, mandate.rate_cap_exceeded: seconds to wait (also in Retry-After).',
    ).optional(),
    seq: int('decision.not_open, decision.proposing, choice.not_eligible: the decision number.').optional(),
    voting_opens_at: z
      .string()
      .nullable()
      .optional()
      .describe('decision.proposing: when choosing opens (RFC 3339, UTC); null without a deadline.'),
    open_decisions: openDecisions.optional(),
    max_open_decisions: int('decision.already_open: the room max_open_decisions.').optional(),
    options: z
      .array(
        z.object({
          number: int('The option number (1-based).'),
          text: z.string().describe('The option text.'),
        }),
      )
      .optional()
      .describe('choice.invalid_option: the numbered options of the decision.'),
    authority: z
      .string()
      .optional()
      .describe('authority.denied: the authority setting that refused (for example invite_authority).'),
    required: z.string().optional().describe('authority.denied: what that authority requires.'),
    path: z.string().optional().describe('vendor:conclave:not_found: the path that names nothing.'),
    allowed: z
      .array(z.string())
      .optional()
      .describe('vendor:conclave:method_not_allowed: the methods the route allows.'),
  })
  .meta({
    id: 'ErrorDetails',
    description: 'Machine-readable specifics of an error; which fields appear depends on the code.',
  });

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
        details: errorDetailsSchema
          .optional()
          .describe(
            'Machine-readable specifics of this code (docs/architecture.md, Errors); absent when there are none.',
          ),
        request_id: z.string().optional().describe('The request id, also in the X-Request-Id response header.'),
      })
      .describe('The error.'),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Every REST error, and every failed MCP tool call, is this envelope.' });
