/**
 * A budget of request-body bytes the process holds at once, shared fairly (docs/architecture.md,
 * Robustness at the edges: bodies in flight). A body is buffered whole before its route runs, and the
 * whole request may take 30 s to arrive, so one client address trickling many bodies of just under
 * the 4 MiB limit, each on its own socket (up to the per-address socket cap), held that many times
 * 4 MiB of memory: 300 of them grew the process by 1.2 GiB. A request with a body reserves its
 * declared `Content-Length` before a byte of it is read; a chunked one (no length: a client streaming
 * its JSON) reserves a first step and then what it has sent, a step at a time, as it arrives, so a few
 * small streamed bodies are not each charged the most one could send. The bytes come back when the
 * response ends or the connection closes. One address holds at most a tenth of the budget (never less
 * than one body of the limit); past its share it gets 429 `rate_limit.exceeded`, past the whole budget
 * any client gets 503 with Retry-After: before its body is read, or, for a chunked one, as it passes.
 */
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addressGroup } from '../auth/client-address.js';
import type { ErrorSpec } from '../errors.js';
import { BODY_LIMIT } from './body.js';
import { sendError } from './errors.js';
import { ProtocolError } from '../errors.js';

/** The default budget: 64 bodies of the limit, a fraction of the 0.7 GiB a process is sized for. */
export const DEFAULT_BODY_BYTES_IN_FLIGHT = 256 * 1024 * 1024;
const ADDRESS_PERCENT = 10;
const RETRY_AFTER_SECONDS = 1;
/** How long a body may take to arrive (http/slow-requests.ts): the longest a reservation is held for it. */
const WINDOW_SECONDS = 30;
/** A chunked body's reservation grows by this much at a time (the first step is reserved up front). */
export const CHUNKED_STEP = 64 * 1024;

/** Bytes held for one request: released once, grown while a chunked body arrives. */
export interface Reservation {
  readonly bytes: number;
  /** Holds `more` bytes besides, or answers why not (the reservation is unchanged then). */
  grow(more: number): true | 'address' | 'full';
  release(): void;
}

export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();
  readonly addressLimit: number;

  constructor(readonly max: number) {
    this.addressLimit = Math.max(BODY_LIMIT, Math.floor((max * ADDRESS_PERCENT) / 100));
  }

  /** Reserves `bytes` for `address`, or answers why not; the release is idempotent. */
  reserve(address: string, bytes: number): Reservation | 'address' | 'full' {
    const refused = this.take(address, bytes);
    if (refused) return refused;
    let held = bytes;
    let released = false;
    return {
      get bytes() {
        return held;
      },
      grow: (more) => {
        if (released) return true;
        const refusal = this.take(address, more);
        if (refusal) return refusal;
        held += more;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.used -= held;
        const left = (this.byAddress.get(address) ?? 0) - held;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
      },
    };
  }

  private take(address: string, bytes: number): 'address' | 'full' | null {
    const held = this.byAddress.get(address) ?? 0;
    if (held + bytes > this.addressLimit) return 'address';
    if (this.used + bytes > this.max) return 'full';
    this.used += bytes;
    this.byAddress.set(address, held + bytes);
    return null;
  }

  get inFlight(): number {
    return this.used;
  }
}

/**
 * The bytes a request's body reserves before it is read: its declared length; for a chunked one, the
 * first step (it grows as the body arrives: `countArrivals`); 0 without a body.
 */
export function declaredBytes(headers: Record<string, string | string[] | undefined>): number {
  const length = Number(headers['content-length']);
  if (headers['content-length'] !== undefined && Number.isFinite(length))
    return Math.min(Math.max(0, length), BODY_LIMIT);
  return isChunked(headers) ? CHUNKED_STEP : 0;
}

function isChunked(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['content-length'] === undefined && headers['transfer-encoding'] !== undefined;
}

/**
 * A chunked body's bytes as they arrive, its reservation grown a step ahead of them; past the share
 * (or the whole budget) the body stops with the refusal, which the error handler answers.
 */
function countArrivals(payload: NodeJS.ReadableStream, reservation: Reservation, limit: number): Transform {
  let arrived = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      arrived += chunk.length;
      counter.receivedEncodedLength = arrived;
      // Past the body limit the body is refused 413 as it is read (body.ts): no more is reserved for it.
      if (arrived > reservation.bytes && reservation.bytes < BODY_LIMIT) {
        const step = Math.min(BODY_LIMIT - reservation.bytes, Math.max(CHUNKED_STEP, arrived - reservation.bytes));
        const refused = reservation.grow(step);
        if (refused !== true) return next(new ProtocolError(refusal(refused, limit, true)));
      }
      next(null, chunk);
    },
  }) as Transform & { receivedEncodedLength: number };
  counter.receivedEncodedLength = 0;
  payload.on('error', (error) => counter.destroy(error));
  return payload.pipe(counter);
}

/** Why a body was refused, as the envelope says it; `midBody`: its connection closes after the answer. */
function refusal(why: 'address' | 'full', limit: number, midBody: boolean): ErrorSpec {
  const spec = why === 'full' ? FULL : overShare(limit);
  return midBody ? { ...spec, headers: { ...spec.headers, connection: 'close' } } : spec;
}

function overShare(limit: number): ErrorSpec {
  return {
    code: 'rate_limit.exceeded',
    message: `Too many request bodies in flight: this client address is already sending ${limit} bytes of bodies, its share of this process. Finish or cancel an upload, or retry after ${RETRY_AFTER_SECONDS} s.`,
    hint: 'Send requests with bodies one after another rather than all at once.',
    details: {
      scope: 'ip',
      limit,
      window_seconds: WINDOW_SECONDS,
      retry_after_seconds: RETRY_AFTER_SECONDS,
    },
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  };
}

const FULL: ErrorSpec = {
  code: 'vendor:conclave:unavailable',
  message:
    'The service is receiving as many request bodies as it can hold right now. Retry after the pause in Retry-After.',
  hint: 'Retry in a second.',
  headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
};

export function installBodyBudget(app: FastifyInstance, budget: BodyBudget): void {
  const reservations = new WeakMap<FastifyRequest, Reservation>();
  app.addHook('onRequest', async (request, reply) => {
    const bytes = declaredBytes(request.headers);
    if (bytes === 0) return;
    const reserved = budget.reserve(addressGroup(request.ip), bytes);
    if (reserved === 'address' || reserved === 'full') {
      // The body is not read: the connection closes once the answer is sent.
      reply.header('connection', 'close');
      sendError(reply, request, refusal(reserved, budget.addressLimit, false), reserved === 'full' ? 503 : 429);
      return reply;
    }
    reply.raw.once('close', reserved.release);
    if (isChunked(request.headers)) reservations.set(request, reserved);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const reservation = reservations.get(request);
    return reservation ? countArrivals(payload, reservation, budget.addressLimit) : payload;
  });
}
