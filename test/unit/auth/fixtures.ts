/** Helpers for the mandate tests: keys, signed and hand-made mandates, verifier dependencies. */
import { createIssuerTrust, type IssuerPolicy } from '../../../src/auth/issuers.js';
import type { FetchedIssuerDocument } from '../../../src/auth/issuer-documents.js';
import { parseIssuerDocument } from '../../../src/auth/issuer-documents.js';
import type { MandateDeps } from '../../../src/auth/mandates.js';
import { MemoryRateCounters } from '../../../src/auth/rate-limit.js';
import {
  base64urlEncode,
  didKeyFromPublicKey,
  type Keyring,
  loadKeyring,
  MANDATE_TYP,
  rawPublicKey,
  type SigningKey,
  signCompact,
  signingKeyFromSeed,
} from '../../../src/receipts/index.js';

export const BASE = 'https://conclave.test';
export const NOW = Date.parse('2026-05-01T10:00:00.000Z');
export const NOW_S = NOW / 1000;

export function keyFromByte(byte: number): SigningKey {
  return signingKeyFromSeed(new Uint8Array(32).fill(byte));
}

export function didOf(key: SigningKey): string {
  return didKeyFromPublicKey(rawPublicKey(key.publicKey));
}

export function claims(overrides: Record<string, unknown> = {}, svc: Record<string, unknown> = {}) {
  return {
    iss: 'https://issuer.test',
    sub: 'did:key:z6MkAgent',
    jti: 'urn:uuid:00000000-0000-4000-8000-000000000001',
    iat: NOW_S - 60,
    exp: NOW_S + 3600,
    svc: { rooms: ['*'], actions: ['choose', 'discuss'], ...svc },
    ...overrides,
  };
}

export function sign(payload: unknown, key: SigningKey, header: Record<string, unknown> = {}): string {
  return signCompact({ alg: 'EdDSA', typ: MANDATE_TYP, kid: key.kid, ...header }, payload, key);
}

/** A did:key mandate: iss and kid are the DID of `key`. */
export function selfIssued(
  key: SigningKey,
  overrides: Record<string, unknown> = {},
  svc: Record<string, unknown> = {},
) {
  const did = didOf(key);
  return sign(claims({ iss: did, ...overrides }, svc), key, { kid: did });
}

/** Hand-assembled JWS segments, for shapes signCompact would never produce. */
export function rawJws(header: unknown, payload: unknown, signature = 'A'.repeat(86)): string {
  const seg = (value: unknown) => (typeof value === 'string' ? value : base64urlEncode(JSON.stringify(value)));
  return `${seg(header)}.${seg(payload)}.${signature}`;
}

/** A fake network for HTTPS issuers: origin → document (or an error), counting fetches. */
export class FakeIssuers {
  readonly documents = new Map<string, { keys: SigningKey[]; revoked?: string[]; maxAgeMs?: number } | Error>();
  fetches = 0;

  fetch = async (origin: string): Promise<FetchedIssuerDocument> => {
    this.fetches++;
    const doc = this.documents.get(origin);
    if (doc === undefined) throw new Error(`no issuer at ${origin}`);
    if (doc instanceof Error) throw doc;
    return {
      ...parseIssuerDocument({
        keys: doc.keys.map((k) => k.jwk),
        revocations: (doc.revoked ?? []).map((jti) => ({ jti, revoked_at: '2026-05-01T00:00:00.000Z' })),
      }),
      maxAgeMs: doc.maxAgeMs ?? 300_000,
    };
  };
}

export interface TestDeps extends MandateDeps {
  keyring: Keyring;
  network: FakeIssuers;
  ownRevoked: Set<string>;
  counters: MemoryRateCounters;
}

export async function testDeps(policy: Partial<IssuerPolicy> = {}): Promise<TestDeps> {
  const keyring = await loadKeyring({});
  const network = new FakeIssuers();
  const ownRevoked = new Set<string>();
  const counters = new MemoryRateCounters();
  const issuers = createIssuerTrust({
    allowlist: [],
    allowSelfIssued: undefined,
    allowPrivate: false,
    ...policy,
    keyring,
    baseUrl: () => BASE,
    isOwnRevoked: async (jti) => ownRevoked.has(jti),
    fetchDocument: network.fetch,
  });
  return { issuers, rateCaps: counters, baseUrl: () => BASE, keyring, network, ownRevoked, counters };
}
