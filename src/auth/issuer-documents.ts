/**
 * HTTPS mandate issuers publish their signing `keys` and `revocations` at
 * `<origin>/.well-known/svc.json` (docs/operators.md, Mandates and the device flow). This module fetches those documents through the
 * outbound address guard and caches them: fresh for at most 5 minutes (less when Cache-Control says
 * so), usable for up to an hour when a refresh fails, refetched early at most once a minute when a
 * `kid` is missing.
 */
import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Agent, request } from 'undici';
import { verificationKeyFromX } from '../receipts/index.js';
import { assertHostAllowed, guardedLookup } from './address-guard.js';

export interface IssuerDocument {
  keys: ReadonlyMap<string, KeyObject>;
  revoked: ReadonlySet<string>;
}

export interface FetchedIssuerDocument extends IssuerDocument {
  /** How long the issuer allows the document to be cached, already capped at 5 minutes. */
  maxAgeMs: number;
}

export type IssuerDocumentFetcher = (origin: string) => Promise<FetchedIssuerDocument>;

export class IssuerKeysUnavailable extends Error {
  constructor(origin: string, cause: unknown) {
    super(`the keys of ${origin} cannot be obtained (${(cause as Error)?.message ?? String(cause)})`, { cause });
    this.name = 'IssuerKeysUnavailable';
  }
}

export const MAX_FRESH_MS = 5 * 60_000;
export const MAX_STALE_MS = 60 * 60_000;
export const KID_REFETCH_INTERVAL_MS = 60_000;
/** After a failed refresh the stale copy is served without retrying, so a dead issuer costs one timeout per period. */
const FAILED_REFRESH_BACKOFF_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;
const MAX_CACHED_ISSUERS = 1000;

interface Entry {
  document: IssuerDocument;
  fetchedAt: number;
  maxAgeMs: number;
  lastKidRefetchAt: number | null;
  failedRefreshAt: number | null;
}

export class IssuerDocumentCache {
  /** Least recently fetched dropped first past MAX_CACHED_ISSUERS (reads do not refresh recency). */
  private readonly entries = new LRUCache<string, Entry>({ max: MAX_CACHED_ISSUERS });
  private readonly inFlight = new Map<string, Promise<Entry>>();

  constructor(private readonly fetchDocument: IssuerDocumentFetcher) {}

  /**
   * The issuer's document, refreshed when no longer fresh; throws IssuerKeysUnavailable. `fetched`
   * tells whether it was fetched by this very call (then a missing kid is not worth a refetch).
   */
  async current(origin: string, now: number): Promise<{ document: IssuerDocument; fetched: boolean }> {
    const entry = this.entries.peek(origin);
    const usableStale = entry !== undefined && now - entry.fetchedAt <= MAX_STALE_MS;
    if (entry && now - entry.fetchedAt < entry.maxAgeMs) return { document: entry.document, fetched: false };
    if (usableStale && entry.failedRefreshAt !== null && now - entry.failedRefreshAt < FAILED_REFRESH_BACKOFF_MS) {
      return { document: entry.document, fetched: false };
    }
    try {
      return { document: (await this.refresh(origin, now)).document, fetched: true };
    } catch (error) {
      if (!usableStale) throw new IssuerKeysUnavailable(origin, error);
      entry.failedRefreshAt = now;
      return { document: entry.document, fetched: false };
    }
  }

  /**
   * Called when a `kid` is missing from the cached document: refetches once, unless that already
   * happened for this issuer within the last minute. Returns the new document, or null.
   */
  async refetchForMissingKid(origin: string, now: number): Promise<IssuerDocument | null> {
    const entry = this.entries.peek(origin);
    if (entry?.lastKidRefetchAt != null && now - entry.lastKidRefetchAt < KID_REFETCH_INTERVAL_MS) return null;
    if (entry) entry.lastKidRefetchAt = now;
    try {
      const fresh = await this.refresh(origin, now);
      fresh.lastKidRefetchAt = now;
      return fresh.document;
    } catch {
      return null;
    }
  }

  private refresh(origin: string, now: number): Promise<Entry> {
    const pending = this.inFlight.get(origin);
    if (pending) return pending;
    const previous = this.entries.peek(origin);
    const promise = this.fetchDocument(origin)
      .then((fetched) => {
        const entry: Entry = {
          document: { keys: fetched.keys, revoked: fetched.revoked },
          fetchedAt: now,
          maxAgeMs: Math.min(fetched.maxAgeMs, MAX_FRESH_MS),
          lastKidRefetchAt: previous?.lastKidRefetchAt ?? null,
          failedRefreshAt: null,
        };
        this.remember(origin, entry);
        return entry;
      })
      .finally(() => this.inFlight.delete(origin));
    this.inFlight.set(origin, promise);
    return promise;
  }

  private remember(origin: string, entry: Entry): void {
    this.entries.set(origin, entry);
  }
}

/**
 * Fetches `<origin>/.well-known/svc.json` over the network. With `allowPrivate` the address guard is
 * off and plain `http` origins are allowed: that is how tests run a local issuer on 127.0.0.1.
 */
export function httpIssuerDocumentFetcher(options: { allowPrivate: boolean }): IssuerDocumentFetcher {
  const dispatcher = new Agent({
    connect: { timeout: FETCH_TIMEOUT_MS, ...(options.allowPrivate ? {} : { lookup: guardedLookup }) },
    headersTimeout: FETCH_TIMEOUT_MS,
    bodyTimeout: FETCH_TIMEOUT_MS,
  });
  return async (origin) => {
    const url = new URL('/.well-known/svc.json', origin);
    if (!options.allowPrivate) {
      if (url.protocol !== 'https:') throw new Error('issuer documents are fetched over HTTPS only');
      assertHostAllowed(url.hostname);
    }
    const response = await request(url, {
      method: 'GET',
      dispatcher,
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`GET ${url.href} answered ${response.statusCode}`);
    }
    const text = await readLimited(response.body, MAX_DOCUMENT_BYTES);
    const cacheControl = response.headers['cache-control'];
    return {
      ...parseIssuerDocument(JSON.parse(text)),
      maxAgeMs: maxAgeOf(Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl),
    };
  };
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw new Error(`issuer document is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `keys` must be an array; unusable entries are skipped. Keys are indexed by `kid` (else thumbprint). */
export function parseIssuerDocument(value: unknown): IssuerDocument {
  if (value === null || typeof value !== 'object' || !Array.isArray((value as { keys?: unknown }).keys)) {
    throw new Error('issuer document has no keys array');
  }
  const doc = value as { keys: unknown[]; revocations?: unknown };
  const keys = new Map<string, KeyObject>();
  for (const jwk of doc.keys) {
    if (jwk === null || typeof jwk !== 'object') continue;
    const { kty, crv, x, kid } = jwk as Record<string, unknown>;
    if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string') continue;
    try {
      const key = verificationKeyFromX(x);
      keys.set(typeof kid === 'string' && kid !== '' ? kid : key.kid, key.publicKey);
    } catch {
      // not a usable Ed25519 key
    }
  }
  const revoked = new Set<string>();
  if (Array.isArray(doc.revocations)) {
    for (const entry of doc.revocations) {
      const jti = (entry as { jti?: unknown } | null)?.jti;
      if (typeof jti === 'string') revoked.add(jti);
    }
  }
  return { keys, revoked };
}

export function maxAgeOf(cacheControl: string | undefined): number {
  if (!cacheControl) return MAX_FRESH_MS;
  const directives = cacheControl.toLowerCase();
  if (/(?:^|[\s,])(?:no-store|no-cache)(?:$|[\s,=])/.test(directives)) return 0;
  const match = /(?:^|[\s,])max-age\s*=\s*"?(\d+)"?/.exec(directives);
  if (!match) return MAX_FRESH_MS;
  return Math.min(Number(match[1]) * 1000, MAX_FRESH_MS);
}
