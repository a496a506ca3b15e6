/** What a call can fail with: the service's answer (ConclaveError) or no answer at all. */
import type { ErrorCode } from './types/errors.js';

/** A non-2xx answer, carrying the protocol's error envelope (docs/architecture.md, Errors) or OAuth's flat form. */
export class ConclaveError extends Error {
  /** The envelope's code: one of the protocol's, OAuth's, or a vendor's (`vendor:…`). */
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | undefined;

  constructor(init: {
    code: ErrorCode;
    message: string;
    status: number;
    hint?: string | undefined;
    details?: Record<string, unknown> | undefined;
    requestId?: string | undefined;
    retryAfter?: number | undefined;
  }) {
    super(init.message);
    this.name = 'ConclaveError';
    this.code = init.code;
    this.status = init.status;
    this.hint = init.hint;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/** The request never got an answer: connection refused or reset, DNS, a timeout, or an abort. */
export class ConclaveNetworkError extends Error {
  readonly kind: 'network' | 'timeout' | 'aborted';

  constructor(kind: 'network' | 'timeout' | 'aborted', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConclaveNetworkError';
    this.kind = kind;
  }
}
