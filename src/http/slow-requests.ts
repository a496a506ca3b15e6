/**
 * The slow-request defence (docs/architecture.md, Robustness at the edges: slow clients and busy
 * turns): a client must send a request's headers within `headersTimeoutMs` and the whole request
 * within `requestTimeoutMs`, or it is answered 408 and closed, so a socket trickling a request (one
 * byte a second) cannot hold its descriptor for long. Only the client's slowness counts: a request
 * whose bytes have arrived is never timed out while it waits for the service.
 *
 * Node's own checks (the server's `headersTimeout` and `requestTimeout`) are turned off because they
 * cannot tell the two apart. They run in the event loop's timers phase, which comes before the poll
 * phase that reads sockets, and they ask whether the socket's parser has seen the end of the headers.
 * After a turn that outlasted the timeout (a burst of ten thousand stream opens on a loaded process),
 * every request accepted before it whose bytes wait whole in the kernel, unread, was answered 408.
 *
 * Here the sweep (timers phase, like Node's) only nominates the sockets that look overdue; the verdict
 * waits for setImmediate, which runs after the next poll phase has read every socket with bytes
 * waiting and handed each complete head to the server as a request. A nominee that became a request
 * by then had sent its headers in time and is spared; one still waiting for its client's bytes is cut
 * off. The clock starts at the connection (or, on a kept-alive socket, at the first sweep that sees
 * the next request's bytes arrive), so a trickle never resets it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorHandler } from './client-errors.js';

/** A request cut off: which deadline it missed, and the client's address (the peer's: a proxy's behind one). */
export interface SlowRequestCut {
  limit: 'headers' | 'request';
  remoteAddress: string | undefined;
  /** The deadline missed, in milliseconds. */
  timeoutMs: number;
  /** Whether it was answered 408 (not when a response had begun: that socket is only closed). */
  answered408: boolean;
}

/** What the process entry and the app wire to the guard (early-server.ts, app.ts): stop it, and hear of each cut. */
export interface SlowRequestTiming {
  /** Stops the sweep. */
  stop(): void;
  /** From now on, `report` is told of each request cut off (it replaces the one before). */
  reportTo(report: (cut: SlowRequestCut) => void): void;
}

export interface SlowRequestSettings {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Milliseconds on a monotonic clock (tests inject one). */
  now?: () => number;
}

interface InFlight {
  since: number;
  request: IncomingMessage;
  response: ServerResponse;
}

interface Tracked {
  /** When the socket began waiting for the headers of its next request; null while serving or idle. */
  waitingSince: number | null;
  /** Bytes read when it last fell idle after a response: more means the next request has begun. */
  idleBytes: number;
  /** Requests whose response has not closed, with when each request began. */
  inFlight: Map<IncomingMessage, InFlight>;
}

/** What the sweep found overdue, re-judged once the sockets' waiting bytes have been read. */
type Nominee = { socket: Socket; tracked: Tracked };

const TIMED_OUT = Object.assign(new Error('The request was not received in time.'), {
  code: 'ERR_HTTP_REQUEST_TIMEOUT',
});

export class SlowRequestGuard {
  private readonly sockets = new Map<Socket, Tracked>();
  private readonly now: () => number;
  /** Told of each request cut off; the app logs them (app.ts). Nothing is told before one is set. */
  report: (cut: SlowRequestCut) => void = () => undefined;

  constructor(private readonly settings: SlowRequestSettings) {
    this.now = settings.now ?? (() => performance.now());
  }

  /** Follows the server's sockets; returns the function that stops the sweep. */
  attach(server: Server): () => void {
    server.on('connection', (socket: Socket) => this.connected(socket));
    const began = (request: IncomingMessage, response: ServerResponse) => this.began(request, response);
    server.on('request', began);
    // A head answered by the Expect handlers (edge-errors.ts) is complete too.
    server.on('checkContinue', began);
    server.on('checkExpectation', began);
    // An upgraded or tunnelled socket leaves HTTP: it is no longer the server's to time.
    const left = (request: IncomingMessage) => this.sockets.delete(request.socket);
    server.on('upgrade', left);
    server.on('connect', left);
    const interval = Math.max(50, Math.min(1000, this.settings.headersTimeoutMs / 2));
    const sweeper = setInterval(() => this.sweep(), interval);
    sweeper.unref();
    return () => clearInterval(sweeper);
  }

  get tracked(): number {
    return this.sockets.size;
  }

  /**
   * Nominates the overdue sockets and judges them once the poll phase has read what they sent.
   * Resolves when the verdicts are carried out (tests await it).
   */
  sweep(): Promise<void> {
    const nominees = this.overdue();
    if (nominees.length === 0) return Promise.resolve();
    return new Promise((resolve) =>
      setImmediate(() => {
        for (const nominee of nominees) this.judge(nominee);
        resolve();
      }),
    );
  }

  private connected(socket: Socket): void {
    this.sockets.set(socket, { waitingSince: this.now(), idleBytes: 0, inFlight: new Map() });
    socket.once('close', () => this.sockets.delete(socket));
  }

  private began(request: IncomingMessage, response: ServerResponse): void {
    const tracked = this.sockets.get(request.socket);
    if (!tracked || tracked.inFlight.has(request)) return;
    tracked.inFlight.set(request, { since: tracked.waitingSince ?? this.now(), request, response });
    tracked.waitingSince = null;
    response.once('close', () => {
      tracked.inFlight.delete(request);
      if (tracked.inFlight.size === 0) tracked.idleBytes = request.socket.bytesRead;
    });
  }

  private overdue(): Nominee[] {
    const now = this.now();
    const nominees: Nominee[] = [];
    for (const [socket, tracked] of this.sockets) {
      if (tracked.waitingSince === null && tracked.inFlight.size === 0 && socket.bytesRead > tracked.idleBytes) {
        // A kept-alive socket has begun its next request.
        tracked.waitingSince = now;
      }
      if (this.late(tracked, now) !== null) nominees.push({ socket, tracked });
    }
    return nominees;
  }

  /** Which deadline the client is keeping this socket's request waiting past, if any. */
  private late(tracked: Tracked, now: number): SlowRequestCut['limit'] | null {
    const { headersTimeoutMs, requestTimeoutMs } = this.settings;
    if (tracked.waitingSince !== null && now - tracked.waitingSince >= headersTimeoutMs) return 'headers';
    for (const { since, request } of tracked.inFlight.values()) {
      if (!request.complete && now - since >= requestTimeoutMs) return 'request';
    }
    return null;
  }

  private judge({ socket, tracked }: Nominee): void {
    if (socket.destroyed || this.sockets.get(socket) !== tracked) return;
    const limit = this.late(tracked, this.now());
    if (limit === null) return;
    // Read before the socket closes: a destroyed socket no longer knows its peer.
    const remoteAddress = socket.remoteAddress;
    const answered = [...tracked.inFlight.values()].some(({ response }) => response.headersSent);
    // Mid-response there is no room for a 408: the socket only closes.
    if (answered) socket.destroy();
    else clientErrorHandler(TIMED_OUT, socket);
    this.sockets.delete(socket);
    const timeoutMs = limit === 'headers' ? this.settings.headersTimeoutMs : this.settings.requestTimeoutMs;
    this.report({ limit, remoteAddress, timeoutMs, answered408: !answered });
  }
}

/**
 * A cut as a log line's fields: one `request refused` line at info like every other refusal of a
 * client (errors.ts, logRefusal), with the deadline missed and the peer's address, so a slow-client
 * attack shows in the log. Nothing the client sent is in it: no header, no path.
 */
export function slowRequestLogFields(cut: SlowRequestCut): Record<string, unknown> {
  return {
    ...(cut.answered408 ? { status: 408, error_code: 'input.invalid' } : {}),
    limit: cut.limit,
    timeout_ms: cut.timeoutMs,
    remote_address: cut.remoteAddress,
  };
}

/** Times the requests of `server`; Node's own header and request timeouts must be off (app.ts). */
export function installSlowRequestGuard(server: Server, settings: SlowRequestSettings): SlowRequestTiming {
  const guard = new SlowRequestGuard(settings);
  const stop = guard.attach(server);
  return {
    stop,
    reportTo(report) {
      guard.report = report;
    },
  };
}
