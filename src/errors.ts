/**
 * The protocol's error codes with their HTTP status (docs/architecture.md, Errors).
 * Every protocol error thrown anywhere in the service is a ProtocolError built from this table,
 * so a code can never travel with the wrong status.
 */
export const ERROR_STATUS = {
  'auth.required': 401,
  'auth.invalid_token': 401,
  'participant.token_superseded': 401,
  'auth.invalid_password': 401,
  'auth.mandate_required': 401,
  'auth.mandate_not_accepted': 401,
  'mandate.malformed': 401,
  'mandate.issuer_untrusted': 401,
  'mandate.signature_invalid': 401,
  'mandate.expired': 401,
  'mandate.not_yet_valid': 401,
  'mandate.room_not_in_scope': 401,
  'mandate.action_not_in_scope': 401,
  'mandate.weight_cap_exceeded': 401,
  'mandate.rate_cap_exceeded': 401,
  'mandate.revoked': 401,
  'room.not_found': 404,
  'room.join_required': 403,
  'room.invite_required': 403,
  'room.at_capacity': 409,
  'room.concluded': 400,
  'decision.not_open': 400,
  'decision.not_found': 404,
  'decision.proposing': 400,
  'decision.already_open': 409,
  'choice.invalid_option': 400,
  'choice.not_eligible': 403,
  'invite.invalid': 400,
  'authority.denied': 403,
  'input.invalid': 400,
  'idempotency.conflict': 409,
  'rate_limit.exceeded': 429,
  'internal.error': 500,
  'vendor:conclave:not_found': 404,
  'vendor:conclave:method_not_allowed': 405,
  'vendor:conclave:unavailable': 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorSpec {
  code: ErrorCode;
  message: string;
  hint?: string;
  details?: Record<string, unknown>;
  /** Overrides the table's status where the protocol says so (413 for oversize bodies). */
  status?: number;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
}

export class ProtocolError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(spec: ErrorSpec) {
    super(spec.message);
    this.name = 'ProtocolError';
    this.code = spec.code;
    this.status = spec.status ?? ERROR_STATUS[spec.code];
    this.hint = spec.hint;
    this.details = spec.details;
    this.headers = spec.headers;
  }

  toSpec(): ErrorSpec {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
      ...(this.status !== ERROR_STATUS[this.code] ? { status: this.status } : {}),
      ...(this.headers !== undefined ? { headers: this.headers } : {}),
    };
  }
}

export function protocolError(
  code: ErrorCode,
  message: string,
  extra: Omit<ErrorSpec, 'code' | 'message'> = {},
): ProtocolError {
  return new ProtocolError({ code, message, ...extra });
}

/** input.invalid naming the offending field, the most common rejection. */
export function invalidInput(
  field: string | undefined,
  message: string,
  reason?: string,
  extra: Record<string, unknown> = {},
): ProtocolError {
  const details: Record<string, unknown> = { ...extra };
  if (field !== undefined) details.field = field;
  if (reason !== undefined) details.reason = reason;
  return new ProtocolError({
    code: 'input.invalid',
    message,
    ...(Object.keys(details).length > 0 ? { details } : {}),
  });
}

export interface ErrorEnvelope {
  error: {
    code: string;
    message: string;
    hint?: string;
    details?: Record<string, unknown>;
    request_id?: string;
  };
}

export function envelope(spec: ErrorSpec, requestId: string | undefined): ErrorEnvelope {
  return {
    error: {
      code: spec.code,
      message: spec.message,
      ...(spec.hint !== undefined ? { hint: spec.hint } : {}),
      ...(spec.details !== undefined ? { details: spec.details } : {}),
      ...(requestId !== undefined ? { request_id: requestId } : {}),
    },
  };
}
