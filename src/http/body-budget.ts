/**
 * A budget of request-body bytes the process holds at once, shared fairly (docs/architecture.md,
 * Robustness at the edges: bodies in flight). A body is buffered whole before its route runs, and the
 * whole request may take 30 s to arrive, so one client address trickling many bodies of just under
 * the 4 MiB limit, each on its own socket (up to the per-address socket cap), held that many times
 * 4 MiB of memory: 300 of them grew the process by 1.2 GiB. A request with a body reserves its
 * declared `Content-Length` (a chunked one the body limit, the most it may send) before a byte of it
 * is read, and gives it back when its response ends or its connection closes. One address holds at
 * most a tenth of the budget (never less than one body of the limit); past its share it gets 429
 * `rate_limit.exceeded`, past the whole budget any client gets 503 with Retry-After.
 */
import type { FastifyInstance } from 'fastify';
import { addressGroup } from '../auth/client-address.js';
import type { ErrorSpec } from '../errors.js';
import { BODY_LIMIT } from './body.js';
import { sendError } from './errors.js';

/** The default budget: 64 bodies of the limit, a fraction of the 0.7 GiB a process is sized for. */
export const DEFAULT_BODY_BYTES_IN_FLIGHT = 256 * 1024 * 1024;
const ADDRESS_PERCENT = 10;
const RETRY_AFTER_SECONDS = 1;
/** How long a body may take to arrive (http/slow-requests.ts): the longest a reservation is held for it. */
const WINDOW_SECONDS = 30;

export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();
  readonly addressLimit: number;

  constructor(readonly max: number) {
    this.addressLimit = Math.max(BODY_LIMIT, Math.floor((max * ADDRESS_PERCENT) / 100));
  }

  /** Reserves `bytes` for `address`, or answers why not; the release is idempotent. */
  reserve(address: string, bytes: number): { release: () => void } | 'address' | 'full' {
    const held = this.byAddress.get(address) ?? 0;
    if (held + bytes > this.addressLimit) return 'address';
    if (this.used + bytes > this.max) return 'full';
    this.used += bytes;
    this.byAddress.set(address, held + bytes);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.used -= bytes;
        const left = (this.byAddress.get(address) ?? 0) - bytes;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
      },
    };
  }

  get inFlight(): number {
    return this.used;
  }
}

/** The bytes a request's body may take: its declared length, or the limit for a chunked one; 0 without a body. */
export function declaredBytes(headers: Record<string, string | string[] | undefined>): number {
  const length = Number(headers['content-length']);
  if (headers['content-length'] !== undefined && Number.isFinite(length))
    return Math.min(Math.max(0, length), BODY_LIMIT);
  return headers['transfer-encoding'] !== undefined ? BODY_LIMIT : 0;
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
  app.addHook('onRequest', async (request, reply) => {
    const bytes = declaredBytes(request.headers);
    if (bytes === 0) return;
    const reserved = budget.reserve(addressGroup(request.ip), bytes);
    if (reserved === 'address' || reserved === 'full') {
      // The body is not read: the connection closes once the answer is sent.
      reply.header('connection', 'close');
      sendError(
        reply,
        request,
        reserved === 'full' ? FULL : overShare(budget.addressLimit),
        reserved === 'full' ? 503 : 429,
      );
      return reply;
    }
    reply.raw.once('close', reserved.release);
  });
}
