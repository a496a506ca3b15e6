/**
 * Credentials the service has seen proven: a bearer that matched a seat (or the admin token), a token
 * the service just minted, a mandate whose signature verified and whose subject holds a seat. The
 * rate limits look a presented credential up here before the request is authenticated
 * (docs/architecture.md, Rate limits by caller): a known credential is limited on its own budget, an
 * unknown one (garbage, forged, a fresh self-issued mandate) is counted against its client address.
 *
 * Entries are keyed by `credentialRateKey` (a hash of the bearer, or of the mandate's jti and
 * signature), so a forged mandate naming a known jti or subject never finds one. Nothing secret is
 * kept: the key and the bucket are hashes.
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
}

export interface KnownCredentials {
  /** Kept in this process's memory: it answers at once and can never hang (no deadline to race). */
  readonly inProcess?: boolean;
  lookup(key: string): Promise<ProvenCredential | null>;
  remember(key: string, proven: ProvenCredential): Promise<void>;
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
    };
  }
  return presented.bearer ? mintedToken(presented.bearer) : null;
}

/** The budget of a token the service has just handed out (or matched to a seat). */
export function mintedToken(token: string): ProvenCredential {
  return { bucket: `cred:token:${hashSecret(token)}`, issuer: null };
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
}

export class MemoryKnownCredentials implements KnownCredentials {
  readonly inProcess = true;
  private readonly table = new LocalTable();

  constructor(private readonly now: () => number) {}

  async lookup(key: string): Promise<ProvenCredential | null> {
    return this.table.get(key, this.now());
  }

  async remember(key: string, proven: ProvenCredential): Promise<void> {
    this.table.set(key, proven, this.now() + KNOWN_FOR_MS);
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
    const memoized = this.memo.get(key, this.now());
    if (memoized !== null) return memoized;
    const stored = await this.redis.get(this.redisKey(key));
    if (stored === null) return null;
    const proven = JSON.parse(stored) as ProvenCredential;
    this.memo.set(key, proven, this.now() + LOCAL_MEMO_MS);
    return proven;
  }

  async remember(key: string, proven: ProvenCredential): Promise<void> {
    if (this.memo.get(key, this.now()) !== null) return;
    await this.redis.set(this.redisKey(key), JSON.stringify(proven), 'PX', KNOWN_FOR_MS);
    this.memo.set(key, proven, this.now() + LOCAL_MEMO_MS);
  }

  private redisKey(key: string): string {
    return `${this.prefix}rate:known:${key}`;
  }
}
