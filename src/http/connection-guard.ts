/**
 * Guards the listening socket against connections that hold a file descriptor without being served
 * (half-sent requests, silent or idle keep-alive sockets), which the rate limiter never sees
 * (docs/architecture.md, Robustness at the edges):
 * - one client address (an IPv6 /64) holds at most `maxPerAddress` sockets; a new one past that is
 *   closed at once (trusted proxies are exempt: every client arrives through them);
 * - the process holds at most `maxOpen` client sockets (derived from its descriptor limit); a new one
 *   past that closes the socket idle longest (no request in progress), so a fresh client always gets
 *   in and a flood of stalled sockets starves only itself;
 * - an accept that fails with EMFILE/ENFILE is logged (once per interval, with a count) and answered
 *   by closing a batch of the longest-idle sockets, never by crashing.
 * Requests in progress (parked long-polls, event streams) are never closed here.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { addressGroup } from '../auth/client-address.js';
import { connectionBudget, openFileLimit } from '../runtime/file-descriptors.js';

export interface ConnectionGuardSettings {
  /** 0 = no per-address cap. */
  maxPerAddress: number;
  /** Infinity = no process-wide cap. */
  maxOpen: number;
  /** Fastify's trustProxy: `true` trusts every peer (no per-address cap), a list names the proxies. */
  trustProxy: true | string[] | undefined;
}

export interface GuardLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Repeated refusals are summarized in one log line per this interval, so a flood cannot flood the log. */
const LOG_INTERVAL_MS = 10_000;
/** On EMFILE, this share of the idle sockets (at least 16) is closed to give descriptors back. */
const EMFILE_SHED_SHARE = 0.1;

export class ConnectionGuard {
  private readonly perAddress = new Map<string, number>();
  /** Sockets with no request in progress, longest idle first (a Set keeps insertion order). */
  private readonly idle = new Set<Socket>();
  private readonly inFlight = new WeakMap<Socket, number>();
  private readonly exempt: (address: string) => boolean;
  private open = 0;
  private readonly refusals = new Map<string, number>();
  private lastLog = 0;

  constructor(
    private readonly settings: ConnectionGuardSettings,
    private readonly log: GuardLog,
  ) {
    this.exempt = trustedPeers(settings.trustProxy);
  }

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => this.busy(request.socket, response));
    // Accept errors surface as 'error' on a listening server; unhandled, they would end the process.
    // A server listening already (src/start.ts) has its listen behind it: the handler goes on now.
    const onAcceptError = () => server.on('error', (error: NodeJS.ErrnoException) => this.acceptFailed(error));
    if (server.listening) onAcceptError();
    else server.on('listening', onAcceptError);
  }

  /** Counts a socket the server accepted before this guard was attached, as if it connected now. */
  adopt(socket: Socket): void {
    if (!socket.destroyed) this.admit(socket);
  }

  get openSockets(): number {
    return this.open;
  }

  private admit(socket: Socket): void {
    const peer = normalize(socket.remoteAddress);
    if (peer === null) {
      socket.destroy();
      return;
    }
    // IPv6 peers count by their /64 (auth/client-address.ts).
    const address = addressGroup(peer);
    const held = this.perAddress.get(address) ?? 0;
    if (this.settings.maxPerAddress > 0 && held >= this.settings.maxPerAddress && !this.exempt(peer)) {
      this.refuse(socket, 'connections over the per-address cap closed');
      return;
    }
    if (this.open >= this.settings.maxOpen && !this.shed(1)) {
      this.refuse(socket, 'connections over the process cap closed (every socket is busy)');
      return;
    }
    this.open++;
    this.perAddress.set(address, held + 1);
    this.idle.add(socket);
    socket.once('close', () => {
      this.open--;
      this.idle.delete(socket);
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
  }

  private busy(socket: Socket, response: ServerResponse): void {
    this.idle.delete(socket);
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (this.inFlight.get(socket) ?? 1) - 1;
      this.inFlight.set(socket, left);
      // Back to the end of the idle line: idle since now.
      if (left === 0 && !socket.destroyed) this.idle.add(socket);
    });
  }

  /** Closes up to `count` of the longest-idle sockets; true when at least one was closed. */
  private shed(count: number): boolean {
    let closed = 0;
    for (const socket of this.idle) {
      if (closed >= count) break;
      this.idle.delete(socket);
      socket.destroy();
      closed++;
    }
    if (closed > 0) this.note('idle connections closed to make room', closed);
    return closed > 0;
  }

  private acceptFailed(error: NodeJS.ErrnoException): void {
    if (error.code === 'EMFILE' || error.code === 'ENFILE') {
      this.note(`accept failed: ${error.code} (out of file descriptors)`, 1);
      this.shed(Math.max(16, Math.ceil(this.idle.size * EMFILE_SHED_SHARE)));
      return;
    }
    this.note(`listening socket error: ${error.code ?? error.message}`, 1);
  }

  private refuse(socket: Socket, reason: string): void {
    socket.destroy();
    this.note(reason, 1);
  }

  /** Counts an event and logs the counts at most once per interval. */
  private note(reason: string, count: number): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + count);
    const now = Date.now();
    if (now - this.lastLog < LOG_INTERVAL_MS) return;
    this.lastLog = now;
    this.log.warn(
      { counts: Object.fromEntries(this.refusals), open_sockets: this.open },
      'connection guard: shedding connections',
    );
    this.refusals.clear();
  }
}

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is the IPv4 address: one client, one count. */
function normalize(address: string | undefined): string | null {
  if (!address) return null;
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

function trustedPeers(trustProxy: true | string[] | undefined): (address: string) => boolean {
  if (trustProxy === true) return () => true;
  if (!trustProxy || trustProxy.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of trustProxy) {
    const [net, prefix] = entry.split('/');
    const type = isIPv6(net!) ? 'ipv6' : 'ipv4';
    try {
      if (prefix === undefined) list.addAddress(net!, type);
      else list.addSubnet(net!, Number(prefix), type);
    } catch {
      // Not an address fastify's trustProxy would match either: it exempts no one.
    }
  }
  return (address) => list.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}

/**
 * Guards the app's server with the budget of this process's descriptor limit; `maxPerAddress`
 * (MAX_CONNECTIONS_PER_ADDRESS) overrides the derived per-address cap, 0 turns it off.
 */
export function installConnectionGuard(
  app: FastifyInstance,
  trustProxy: true | string[] | undefined,
  maxPerAddress: number | undefined,
): ConnectionGuard {
  const budget = connectionBudget(openFileLimit());
  const guard = new ConnectionGuard(
    { maxPerAddress: maxPerAddress ?? budget.defaultPerAddress, maxOpen: budget.maxOpen, trustProxy },
    app.log,
  );
  guard.attach(app.server);
  return guard;
}
