/**
 * A ceiling on parked connections (long-polls, MCP waits and SSE streams) per process, shared
 * fairly: past the pool (MAX_PARKED_CONNECTIONS) new ones are refused with 503 at once instead of
 * piling up until memory runs out, and no one client address or credential may hold more than its
 * share of the pool, so one client can never take the last place from the others
 * (docs/architecture.md, Engagement: fair shares of the waiting pool).
 */
import type { PresentedCredentials } from '../auth/caller.js';
import { addressGroup } from '../auth/client-address.js';
import { hashSecret } from '../auth/secrets.js';
import { protocolError, type ProtocolError } from '../errors.js';

/**
 * Default shares of the pool, in percent. An address may be a NAT or an office, so it gets a tenth; a
 * credential is one agent (a seat's token, one mandate subject), which needs a handful of waits, so
 * it gets a fiftieth. At the default pool of 20,000: 2,000 per address, 400 per credential.
 */
export const DEFAULT_SHARES: ParkingShares = { addressPercent: 10, credentialPercent: 2 };

export interface ParkingShares {
  addressPercent: number;
  credentialPercent: number;
}
/** A client over its share retries after its own waits time out or wake; 5 s is a polite pause. */
const SHARE_RETRY_AFTER_SECONDS = 5;
/** The longest a parked wait keeps its place (long-poll wait is at most 50 s): the share's window. */
const SHARE_WINDOW_SECONDS = 50;

/** Who is asking for a place: the client address group (TRUST_PROXY rules applied) and, when presented, the credential. */
export interface ParkingClaim {
  address: string;
  /** A stable key of the credential (never the credential itself), or null without one. */
  credential: string | null;
}

/** Gives back the place a successful `enter` took; calling it twice is harmless. */
export type ParkingRelease = () => void;

export class ParkingCapacity {
  private used = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly byCredential = new Map<string, number>();
  readonly addressLimit: number;
  readonly credentialLimit: number;

  constructor(
    private readonly max: number,
    shares: ParkingShares = DEFAULT_SHARES,
  ) {
    this.addressLimit = Math.max(1, Math.floor((max * shares.addressPercent) / 100));
    this.credentialLimit = Math.max(1, Math.floor((max * shares.credentialPercent) / 100));
  }

  /**
   * Takes a place, or throws: 429 `rate_limit.exceeded` when this client is over its own share (its
   * problem, it can act on it), 503 when the whole pool is full (the service's state).
   */
  enter(claim: ParkingClaim): ParkingRelease {
    if ((this.byAddress.get(claim.address) ?? 0) >= this.addressLimit) throw overShare('ip', this.addressLimit);
    if (claim.credential !== null && (this.byCredential.get(claim.credential) ?? 0) >= this.credentialLimit) {
      throw overShare('credential', this.credentialLimit);
    }
    if (this.used >= this.max) throw overloaded();
    this.used++;
    increment(this.byAddress, claim.address, 1);
    if (claim.credential !== null) increment(this.byCredential, claim.credential, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used = Math.max(0, this.used - 1);
      increment(this.byAddress, claim.address, -1);
      if (claim.credential !== null) increment(this.byCredential, claim.credential, -1);
    };
  }

  get parked(): number {
    return this.used;
  }
}

function increment(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

/**
 * The claim of a request: a mandate counts by its (issuer, subject), so minting fresh mandates (new
 * `jti`s) for one agent does not buy more places; a bearer (participant token, hosted key, admin
 * token) counts by its hash.
 */
export function parkingClaim(clientIp: string, credentials: PresentedCredentials): ParkingClaim {
  // IPv6 clients count by their /64 (auth/client-address.ts).
  const address = addressGroup(clientIp);
  const mandate = credentials.verified;
  if (mandate) return { address, credential: `mandate:${hashSecret(`${mandate.iss}\n${mandate.sub}`)}` };
  if (credentials.bearer) return { address, credential: `bearer:${hashSecret(credentials.bearer)}` };
  return { address, credential: null };
}

function overShare(scope: 'ip' | 'credential', limit: number): ProtocolError {
  const who = scope === 'ip' ? 'this client address' : 'this credential';
  return protocolError(
    'rate_limit.exceeded',
    `Too many waiting connections: ${who} already holds ${limit} parked long-polls, MCP waits and event streams, its share of this process. Close one you no longer need, or retry after ${SHARE_RETRY_AFTER_SECONDS} s.`,
    {
      hint: 'One long-poll or one event stream per room is enough to follow it.',
      details: {
        scope,
        limit,
        window_seconds: SHARE_WINDOW_SECONDS,
        retry_after_seconds: SHARE_RETRY_AFTER_SECONDS,
      },
      headers: { 'retry-after': String(SHARE_RETRY_AFTER_SECONDS) },
    },
  );
}

export function overloaded(): ProtocolError {
  return protocolError(
    'vendor:conclave:unavailable',
    'The service is holding as many waiting connections as it can right now. Retry after the pause in Retry-After.',
    {
      hint: 'Retry in a second; a long-poll that times out normally is the usual way to wait.',
      headers: { 'retry-after': '1' },
    },
  );
}
