/**
 * Issuer trust (docs/operators.md, Mandates and the device flow): which mandate issuers this service accepts and where their keys and
 * revocations come from. The service's own base URL is always trusted (keys from the Keyring,
 * revocations from the identity store); HTTPS issuers per the allowlist; `did:key` per the switch.
 */
import type { KeyObject } from 'node:crypto';
import type { Keyring } from '../receipts/index.js';
import { IssuerDocumentCache, type IssuerDocumentFetcher, httpIssuerDocumentFetcher } from './issuer-documents.js';
import type { IssuerForm } from './mandate-claims.js';
import { issuerUntrusted } from './mandate-errors.js';

export type IssuerKind = 'did:key' | 'https' | 'self';

/** The keys and revocations of one trusted issuer, as resolved for one verification. */
export interface TrustedIssuer {
  kind: IssuerKind;
  /** `https://host[:port]` for HTTPS issuers and the service itself; the DID for `did:key`. */
  principal: string;
  /** The key with this `kid`, or null when the issuer has none (after one refetch; docs/operators.md, Mandates and the device flow). */
  key(kid: string, now: number): Promise<KeyObject | null>;
  isRevoked(jti: string, now: number): Promise<boolean>;
}

export interface IssuerTrust {
  /** Step 2 of mandate verification, issuer trust; throws `mandate.issuer_untrusted`. */
  resolve(issuer: IssuerForm, iss: string, now: number): Promise<TrustedIssuer>;
}

export interface IssuerPolicy {
  /** Trusted HTTPS issuer origins; empty = any HTTPS issuer. */
  allowlist: readonly string[];
  /** `did:key` mandates; undefined = the default: on without an allowlist, off with one (docs/operators.md, Mandates and the device flow). */
  allowSelfIssued: boolean | undefined;
  /** Lets issuers live on private addresses and plain http (local test issuers only). */
  allowPrivate: boolean;
}

export interface IssuerTrustOptions extends IssuerPolicy {
  keyring: Keyring;
  /** The service's base URL; read on each use because tests learn the port after start. */
  baseUrl: () => string;
  /** Whether the service itself revoked this jti (a hosted-key mandate, docs/concepts.md, Mandates). */
  isOwnRevoked: (jti: string) => Promise<boolean>;
  /** Replaces the network fetch (unit tests). */
  fetchDocument?: IssuerDocumentFetcher;
}

export function createIssuerTrust(options: IssuerTrustOptions): IssuerTrust {
  const allowlist = new Set(options.allowlist.map(normalizeOrigin));
  const allowSelfIssued = options.allowSelfIssued ?? allowlist.size === 0;
  const documents = new IssuerDocumentCache(
    options.fetchDocument ?? httpIssuerDocumentFetcher({ allowPrivate: options.allowPrivate }),
  );

  const self: Omit<TrustedIssuer, 'principal'> = {
    kind: 'self',
    key: async (kid) => options.keyring.byKid(kid)?.publicKey ?? null,
    isRevoked: (jti) => options.isOwnRevoked(jti),
  };

  return {
    async resolve(issuer, iss, now) {
      switch (issuer.kind) {
        case 'self':
          return { ...self, principal: new URL(options.baseUrl()).origin };
        case 'did:key': {
          if (!allowSelfIssued) {
            throw issuerUntrusted(
              iss,
              'self_issued_disabled',
              'this service does not accept self-issued (did:key) mandates',
            );
          }
          const { publicKey } = issuer;
          return {
            kind: 'did:key',
            principal: issuer.did,
            // docs/concepts.md, Mandates: the header kid of a did:key mandate is the full DID.
            key: async (kid) => (kid === issuer.did ? publicKey : null),
            isRevoked: async () => false,
          };
        }
        case 'url':
          return resolveHttpsIssuer(issuer.origin, iss, now);
      }
    },
  };

  async function resolveHttpsIssuer(origin: string, iss: string, now: number): Promise<TrustedIssuer> {
    if (origin.startsWith('http:') && !options.allowPrivate) {
      throw issuerUntrusted(iss, 'not_https', 'mandate issuers must be HTTPS origins');
    }
    if (allowlist.size > 0 && !allowlist.has(origin)) {
      throw issuerUntrusted(iss, 'not_allowlisted', 'it is not on the configured issuer allowlist');
    }
    let loaded: Awaited<ReturnType<IssuerDocumentCache['current']>>;
    try {
      loaded = await documents.current(origin, now);
    } catch {
      // One message whatever failed: the cause (a DNS answer, a refused private address, a timeout)
      // would let anyone probe which host names resolve, and to what, through this service.
      throw issuerUntrusted(
        iss,
        'keys_unavailable',
        `could not fetch the issuer's keys (GET ${origin}/.well-known/svc.json must answer 200 with JSON listing its keys, over HTTPS, from a public address)`,
      );
    }
    let document = loaded.document;
    return {
      kind: 'https',
      principal: origin,
      async key(kid, keyNow) {
        const known = document.keys.get(kid);
        if (known || loaded.fetched) return known ?? null;
        document = (await documents.refetchForMissingKid(origin, keyNow)) ?? document;
        return document.keys.get(kid) ?? null;
      },
      isRevoked: async (jti) => document.revoked.has(jti),
    };
  }
}

/** `https://Host:443/` → `https://host`; throws on anything that is not an http(s) origin. */
export function normalizeOrigin(value: string): string {
  const url = new URL(value.trim());
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${value} is not an http(s) origin`);
  return url.origin;
}
