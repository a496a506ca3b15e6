/** The error codes a call can fail with (docs/agents.md, The REST loop), as a closed union. */

/** The protocol's own codes. */
export type ProtocolErrorCode =
  | 'auth.required'
  | 'auth.invalid_token'
  | 'participant.token_superseded'
  | 'auth.invalid_password'
  | 'auth.mandate_required'
  | 'auth.mandate_not_accepted'
  | 'mandate.malformed'
  | 'mandate.issuer_untrusted'
  | 'mandate.signature_invalid'
  | 'mandate.expired'
  | 'mandate.not_yet_valid'
  | 'mandate.room_not_in_scope'
  | 'mandate.action_not_in_scope'
  | 'mandate.weight_cap_exceeded'
  | 'mandate.rate_cap_exceeded'
  | 'mandate.revoked'
  | 'room.not_found'
  | 'room.join_required'
  | 'room.invite_required'
  | 'room.at_capacity'
  | 'room.concluded'
  | 'decision.not_open'
  | 'decision.not_found'
  | 'decision.proposing'
  | 'decision.already_open'
  | 'choice.invalid_option'
  | 'choice.not_eligible'
  | 'invite.invalid'
  | 'authority.denied'
  | 'input.invalid'
  | 'idempotency.conflict'
  | 'rate_limit.exceeded'
  | 'internal.error';

/** The flat OAuth errors of the device-authorization endpoints (RFC 6749, RFC 8628). */
export type OAuthErrorCode =
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'invalid_grant'
  | 'invalid_request'
  | 'invalid_scope'
  | 'invalid_target'
  | 'server_error'
  | 'unsupported_grant_type';

/**
 * Every `ConclaveError.code`: the protocol's codes, a vendor's own (`vendor:conclave:not_found`, …),
 * OAuth's, `mcp.error` (an MCP answer without a result) and `http_<status>` (an answer without an
 * envelope, e.g. from a proxy).
 */
export type ErrorCode = ProtocolErrorCode | OAuthErrorCode | `vendor:${string}` | 'mcp.error' | `http_${number}`;

/** The error envelope of every non-2xx REST answer. */
export interface ErrorEnvelope {
  error: {
    code: ErrorCode;
    message: string;
    hint?: string;
    details?: Record<string, unknown>;
    request_id?: string;
  };
}
