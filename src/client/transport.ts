/**
 * One HTTP exchange with the service: credentials into headers (never into URLs), an Idempotency-Key
 * on every mutation, a timeout and the caller's AbortSignal, the error envelope into ConclaveError,
 * and opt-in retries: of 429/503, honouring Retry-After, and of network errors on requests that are
 * safe to repeat (GETs, and mutations carrying an Idempotency-Key, which the retry reuses).
 */
import { ConclaveError, ConclaveNetworkError } from './errors.js';
import type { RouteSpec } from './routes.js';
import type { ErrorCode } from './types/errors.js';

/** Credentials for one call (docs/agents.md, The REST loop). A hosted key carries its mandate. */
export interface Auth {
  token?: string;
  mandate?: string;
  bearer?: string;
  /** Room password (X-Room-Password), for reading password-protected rooms. */
  password?: string;
  hosted?: { accessToken: string; mandate: string };
}

/** What every method accepts besides its fields. */
export interface CallOptions {
  auth?: Auth;
  /** Defaults to a fresh UUID on mutations; `false` sends none. */
  idempotencyKey?: string | false;
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call (ms). */
  timeoutMs?: number;
}

/** How retries wait; tests inject their own `sleep` and `random` to run without real time. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  attempts: number;
  /** No wait is longer than this (ms). */
  maxDelayMs: number;
  /** The first network-error backoff (ms); it doubles with each attempt, with jitter. */
  baseDelayMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** In [0, 1): the jitter. */
  random: () => number;
}

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  defaultAuth: Auth;
  retry: RetryPolicy | null;
}

export const DEFAULT_TIMEOUT_MS = 45_000;

const CALL_OPTION_KEYS = new Set(['auth', 'idempotencyKey', 'signal', 'timeoutMs']);

/** Splits a method's input into path parameters, the remaining fields, and the call options. */
export function splitInput(
  path: string,
  input: Record<string, unknown>,
): { path: string; fields: Record<string, unknown>; options: CallOptions } {
  const fields: Record<string, unknown> = {};
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (CALL_OPTION_KEYS.has(key)) options[key] = value;
    else if (value !== undefined) fields[key] = value;
  }
  const filled = path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = fields[name];
    if (typeof value !== 'string' || value === '') throw new TypeError(`${name} is required`);
    delete fields[name];
    return encodeURIComponent(value);
  });
  return { path: filled, fields, options: options as CallOptions };
}

export function credentialHeaders(auth: Auth): Record<string, string> {
  const headers: Record<string, string> = {};
  if (auth.hosted) {
    headers.authorization = `Bearer ${auth.hosted.accessToken}`;
    headers['x-mandate'] = auth.hosted.mandate;
  } else {
    const bearer = auth.bearer ?? auth.token;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (auth.mandate) headers['x-mandate'] = auth.mandate;
  }
  if (auth.password) headers['x-room-password'] = auth.password;
  return headers;
}

export class Transport {
  constructor(readonly options: TransportOptions) {}

  /** Calls a route with an input object ({slug, …fields, auth?, idempotencyKey?, signal?}). */
  async route<T>(spec: RouteSpec, input: object = {}, extraHeaders: Record<string, string> = {}): Promise<T> {
    const { path, fields, options } = splitInput(spec.path, input as Record<string, unknown>);
    let query = '';
    let body: string | undefined;
    if (spec.source === 'query') query = queryString(fields);
    else if (spec.source === 'body') body = JSON.stringify(fields);
    const idempotencyKey =
      spec.mutating && options.idempotencyKey !== false ? (options.idempotencyKey ?? crypto.randomUUID()) : undefined;
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...credentialHeaders(options.auth ?? this.options.defaultAuth),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
      ...extraHeaders,
    };
    return this.send<T>(spec.method, `${path}${query}`, { headers, body, options });
  }

  /** Sends a request and parses the JSON answer, retrying when the client opted in and it is safe. */
  async send<T>(
    method: string,
    pathAndQuery: string,
    request: { headers: Record<string, string>; body?: string | undefined; options: CallOptions },
  ): Promise<T> {
    const policy = this.options.retry;
    // A GET changes nothing; a mutation with an Idempotency-Key is answered once however often it arrives.
    const repeatable = method === 'GET' || request.headers['idempotency-key'] !== undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once<T>(method, pathAndQuery, request);
      } catch (error) {
        const waitMs = policy && attempt < policy.attempts ? retryDelay(policy, error, attempt, repeatable) : null;
        if (waitMs === null) throw error;
        await policy!.sleep(waitMs, request.options.signal);
      }
    }
  }

  private async once<T>(
    method: string,
    pathAndQuery: string,
    request: { headers: Record<string, string>; body?: string | undefined; options: CallOptions },
  ): Promise<T> {
    const timeoutMs = request.options.timeoutMs ?? this.options.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.options.signal ? AbortSignal.any([request.options.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await this.options.fetch(`${this.options.baseUrl}${pathAndQuery}`, {
        method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal,
      });
    } catch (error) {
      throw networkError(error, timeout, request.options.signal, timeoutMs);
    }
    const text = await response.text().catch((error: unknown) => {
      throw networkError(error, timeout, request.options.signal, timeoutMs);
    });
    if (!response.ok) throw errorFrom(response, text);
    if (text === '') return {} as T;
    // MCP answers may come SSE-framed; the JSON is the last data line.
    if (response.headers.get('content-type')?.includes('text/event-stream')) {
      const data = text.split('\n').filter((line) => line.startsWith('data:'));
      return JSON.parse(data.at(-1)?.slice(5) ?? '{}') as T;
    }
    return JSON.parse(text) as T;
  }
}

/** How long to wait before retrying after `error`, or null when it must not be retried. */
function retryDelay(policy: RetryPolicy, error: unknown, attempt: number, repeatable: boolean): number | null {
  if (error instanceof ConclaveError && (error.status === 429 || error.status === 503)) {
    return Math.min((error.retryAfter ?? 1) * 1000, policy.maxDelayMs);
  }
  // Only a request that never got an answer; a timeout may still be running on the server.
  if (error instanceof ConclaveNetworkError && error.kind === 'network' && repeatable) {
    const backoff = policy.baseDelayMs * 2 ** attempt;
    return Math.min(Math.round(backoff * (0.5 + policy.random() / 2)), policy.maxDelayMs);
  }
  return null;
}

function queryString(fields: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function errorFrom(response: Response, text: string): ConclaveError {
  // biome-ignore lint/suspicious/noExplicitAny: an error body is probed field by field
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: described below by status alone
  }
  const retryAfterHeader = Number(response.headers.get('retry-after'));
  const retryAfter = Number.isFinite(retryAfterHeader) && retryAfterHeader >= 0 ? retryAfterHeader : undefined;
  const requestId = response.headers.get('x-correlation-id') ?? undefined;
  const envelope = body?.error;
  if (envelope && typeof envelope === 'object' && typeof envelope.code === 'string') {
    return new ConclaveError({
      code: envelope.code as ErrorCode,
      message: typeof envelope.message === 'string' ? envelope.message : response.statusText,
      status: response.status,
      hint: typeof envelope.hint === 'string' ? envelope.hint : undefined,
      details: envelope.details && typeof envelope.details === 'object' ? envelope.details : undefined,
      requestId: typeof envelope.request_id === 'string' ? envelope.request_id : requestId,
      retryAfter,
    });
  }
  if (typeof body?.error === 'string') {
    // RFC 6749's flat form on the OAuth endpoints.
    return new ConclaveError({
      code: body.error as ErrorCode,
      message: typeof body.error_description === 'string' ? body.error_description : body.error,
      status: response.status,
      requestId,
      retryAfter,
    });
  }
  return new ConclaveError({
    code: `http_${response.status}`,
    message: `The service answered ${response.status} ${response.statusText} without an error envelope.`,
    status: response.status,
    requestId,
    retryAfter,
  });
}

function networkError(
  error: unknown,
  timeout: AbortSignal,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): ConclaveNetworkError {
  if (signal?.aborted) return new ConclaveNetworkError('aborted', 'The call was aborted.', { cause: error });
  if (timeout.aborted) {
    return new ConclaveNetworkError('timeout', `No answer within ${timeoutMs} ms.`, { cause: error });
  }
  const reason = (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message ?? String(error);
  return new ConclaveNetworkError('network', `The service could not be reached (${reason}).`, { cause: error });
}

/** Waits `ms`, or rejects when the signal aborts first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ConclaveNetworkError('aborted', 'The call was aborted.'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ConclaveNetworkError('aborted', 'The call was aborted.'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
