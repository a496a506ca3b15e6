/**
 * Credentials the service has seen proven: a bearer that matched a seat (or the admin token), a token
 * the service just minted, a mandate whose signature verified and whose subject holds a seat. The
 * rate limits look a presented credential up here before the request is authenticated
 * (docs/architecture.md, Rate limits by caller): a known credential is limited on its own budget, an
 * unknown one (garbage, forged, a fresh self-issued mandate) is counted against its client address.
 *
 * Entries are keyed by `credentialRateKey` (a hash of the whole bearer or mandate), so a forged
 * mandate naming a known jti or subject, or a known one with its payload edited, never finds one.
 * A mandate is known only while it is valid: its entry ends at its `exp`, and a presented mandate
 * that fails verification (expired, revoked, signature no longer valid) is forgotten at once
 * (operations/run.ts), so a stale copy replayed by someone else counts on their address, never on
 * the subject's budget. Nothing secret is kept: the key and the bucket are hashes.
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { PresentedCredentials } from './caller.js';
import { credentialRateKey } from './rate-limit.js';
import { hashSecret } from './secrets.js';

/** Where a proven credential's calls are counted. */
export interface ProvenCredential {
  /** The per-credential bucket: the token, or the mandate's (issuer, subject). */
  bucket: string;
  /** The issuer bucket of an external mandate issuer; null for tokens and the service's own mandates. */
  issuer: string | null;
  /** When a mandate stops being valid (its `exp`, in ms): it is not known after that. Absent for tokens. */
  expiresAt?: number;
}

export interface KnownCredentials {
  /** Kept in this process's memory: it answers at once and can never hang (no deadline to race). */
  readonly inProcess?: boolean;
  lookup(key: string): Promise<ProvenCredential | null>;
  remember(key: string, proven: ProvenCredential): Promise<void>;
  /** Drops a credential that failed verification: from now on it counts on its presenter's address. */
  forget(key: string): Promise<void>;
}

/** How long a credential stays known without being proven again. */
export const KNOWN_FOR_MS = 24 * 3600_000;
/** Memory bound of the in-process table (and of each process's write-through memo on Redis). */
const MAX_LOCAL_ENTRIES = 100_000;
/** A process re-reads a positive Redis answer after this long at most. */
const LOCAL_MEMO_MS = 5 * 60_000;

/** The budget of a credential proven on this call, or null when it proved nothing. */
export function provenCredential(presented: PresentedCredentials): ProvenCredential | null {
  const mandate = presented.verified;
  if (presented.mandate) {
    if (!mandate) return null;
    return {
      bucket: `cred:subject:${hashSecret(`${mandate.issuerPrincipal}\n${mandate.sub}`)}`,
      // The service's own (hosted) mandates are minted only through an approved device grant.
      issuer: mandate.issuerKind === 'self' ? null : `issuer:${hashSecret(mandate.issuerPrincipal)}`,
      expiresAt: mandate.exp * 1000,
    };
  }
  return presented.bearer ? mintedToken(presented.bearer) : null;
}

/** The budget of a token the service has just handed out (or matched to a seat). */
export function mintedToken(token: string): ProvenCredential {
  return { bucket: `cred:token:${hashSecret(token)}`, issuer: null };
}

/** How long a proven credential stays known from `now`: a day, and never past a mandate's own expiry. */
function knownUntil(proven: ProvenCredential, now: number): number {
  return Math.min(now + KNOWN_FOR_MS, proven.expiresAt ?? Number.POSITIVE_INFINITY);
}

/** Records the credentials a call proved: the presented one (when it proved a seat) and any minted token. */
export async function rememberProven(
  known: KnownCredentials,
  presented: PresentedCredentials,
  seatProven: boolean,
  mintedTokens: readonly string[],
): Promise<void> {
  const key = credentialRateKey(presented);
  const proven = seatProven ? provenCredential(presented) : null;
  if (key !== null && proven !== null) await known.remember(key, proven);
  for (const token of mintedTokens) {
    const tokenKey = credentialRateKey({ bearer: token });
    if (tokenKey !== null) await known.remember(tokenKey, mintedToken(token));
  }
}

interface Entry {
  proven: ProvenCredential;
  until: number;
}

/** A bounded map: expired entries are dropped when read, the oldest when full. */
class LocalTable {
  /** Least recently written dropped first; expiry stays ours, on the injected clock. */
  private readonly entries = new LRUCache<string, Entry>({ max: MAX_LOCAL_ENTRIES });

  get(key: string, now: number): ProvenCredential | null {
    const entry = this.entries.peek(key);
    if (entry === undefined) return null;
    if (entry.until <= now) {
      this.entries.delete(key);
      return null;
    }
    return entry.proven;
  }

  set(key: string, proven: ProvenCredential, until: number): void {
    this.entries.set(key, { proven, until });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

export class MemoryKnownCredentials implements KnownCredentials {
  readonly inProcess = true;
  private readonly table = new LocalTable();

  constructor(private readonly now: () => number) {}

  async lookup(key: string): Promise<ProvenCredential | null> {
    return this.table.get(key, this.now());
  }

  async remember(key: string, proven: ProvenCredential): Promise<void> {
    const now = this.now();
    const until = knownUntil(proven, now);
    if (until > now) this.table.set(key, proven, until);
  }

  async forget(key: string): Promise<void> {
    this.table.delete(key);
  }
}

/**
 * Shared across processes: a token minted by one process is known to all. Each process memoizes
 * positive answers briefly, so a busy credential costs one Redis read per memo period, and skips
 * re-writing an entry it wrote recently. A negative answer is never memoized: it may turn positive.
 */
export class RedisKnownCredentials implements KnownCredentials {
  private readonly memo = new LocalTable();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number,
  ) {}

  async lookup(key: string): Promise<ProvenCredential | null> {
    const now = this.now();
    const memoized = this.memo.get(key, now);
    if (memoized !== null) return memoized;
    const stored = await this.redis.get(this.redisKey(key));
    if (stored === null) return null;
    const proven = JSON.parse(stored) as ProvenCredential;
    // Redis expires the entry on its own clock; the service's clock has the last word on a mandate's exp.
    const until = Math.min(now + LOCAL_MEMO_MS, proven.expiresAt ?? Number.POSITIVE_INFINITY);
    if (until <= now) return null;
    this.memo.set(key, proven, until);
    return proven;
  }

  async remember(key: string, proven: ProvenCredential): Promise<void> {
    const now = this.now();
    if (this.memo.get(key, now) !== null) return;
    const until = knownUntil(proven, now);
    if (until <= now) return;
    await this.redis.set(this.redisKey(key), JSON.stringify(proven), 'PX', until - now);
    this.memo.set(key, proven, Math.min(now + LOCAL_MEMO_MS, until));
  }

  /** Drops the shared entry and this process's memo; another process's memo ends within LOCAL_MEMO_MS, or at its own failed verification. */
  async forget(key: string): Promise<void> {
    this.memo.delete(key);
    await this.redis.del(this.redisKey(key));
  }

  private redisKey(key: string): string {
    return `${this.prefix}rate:known:${key}`;
  }
}
