/**
 * HTTPS mandate issuers over a real local HTTP server (allowed only with MANDATE_ISSUER_ALLOW_PRIVATE):
 * keys and revocations from `/.well-known/svc.json`, the 5-minute cache and Cache-Control, the
 * one-hour stale copy, the once-a-minute refetch for a missing kid, and the address guard.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertHostAllowed, guardedLookup, isForbiddenAddress } from '../../../src/auth/address-guard.js';
import { httpIssuerDocumentFetcher, maxAgeOf } from '../../../src/auth/issuer-documents.js';
import { createIssuerTrust } from '../../../src/auth/issuers.js';
import { type MandateDeps, verifyMandate } from '../../../src/auth/mandates.js';
import { MemoryRateCounters } from '../../../src/auth/rate-limit.js';
import { ProtocolError } from '../../../src/errors.js';
import { loadKeyring, type SigningKey } from '../../../src/receipts/index.js';
import { claims, keyFromByte, NOW, sign } from './fixtures.js';

interface IssuerState {
  keys: SigningKey[];
  revoked: string[];
  cacheControl: string | null;
  status: number;
  body: string | null;
}

let server: Server;
let origin: string;
let requests: string[];
let state: IssuerState;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url !== '/.well-known/svc.json') {
      response.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (state.cacheControl) headers['cache-control'] = state.cacheControl;
    response.writeHead(state.status, headers);
    response.end(
      state.body ??
        JSON.stringify({
          keys: state.keys.map((k) => k.jwk),
          revocations: state.revoked.map((jti) => ({ jti, revoked_at: '2026-05-01T09:00:00.000Z', reason: 'lost' })),
        }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  state = { keys: [keyFromByte(1)], revoked: [], cacheControl: null, status: 200, body: null };
});

async function deps(allowPrivate = true): Promise<MandateDeps> {
  const keyring = await loadKeyring({});
  return {
    issuers: createIssuerTrust({
      allowlist: [],
      allowSelfIssued: undefined,
      allowPrivate,
      keyring,
      baseUrl: () => 'https://conclave.test',
      isOwnRevoked: async () => false,
    }),
    rateCaps: new MemoryRateCounters(),
    baseUrl: () => 'https://conclave.test',
  };
}

const MINUTE = 60_000;

function verifyAt(d: MandateDeps, jws: string, now: number) {
  return verifyMandate(jws, { now, roomSlug: 'k7m3pq2dnx', roomUrl: null, action: 'discuss' }, d);
}

async function codeAt(d: MandateDeps, jws: string, now: number): Promise<string> {
  return verifyAt(d, jws, now).then(
    () => 'ok',
    (error: unknown) => (error instanceof ProtocolError ? error.code : String(error)),
  );
}

describe('HTTPS issuer served from 127.0.0.1', () => {
  it('verifies with the published keys, for both iss forms, and honours its revocations', async () => {
    const d = await deps();
    state.revoked = ['urn:uuid:revoked'];
    const key = state.keys[0]!;
    expect(await codeAt(d, sign(claims({ iss: origin }), key), NOW)).toBe('ok');
    expect(await codeAt(d, sign(claims({ iss: `${origin}/.well-known/svc.json` }), key), NOW)).toBe('ok');
    expect(await codeAt(d, sign(claims({ iss: origin, jti: 'urn:uuid:revoked' }), key), NOW)).toBe('mandate.revoked');
    expect(requests).toEqual(['/.well-known/svc.json']);
  });

  it('caches for at most 5 minutes, less when Cache-Control says so', async () => {
    const d = await deps();
    const jws = sign(claims({ iss: origin }), state.keys[0]!);
    state.cacheControl = 'public, max-age=86400';
    await verifyAt(d, jws, NOW);
    await verifyAt(d, jws, NOW + 5 * MINUTE - 1);
    expect(requests).toHaveLength(1);
    state.cacheControl = 'max-age=60';
    await verifyAt(d, jws, NOW + 5 * MINUTE);
    expect(requests).toHaveLength(2);
    await verifyAt(d, jws, NOW + 6 * MINUTE - 1);
    expect(requests).toHaveLength(2);
    await verifyAt(d, jws, NOW + 6 * MINUTE);
    expect(requests).toHaveLength(3);
  });

  it('sees a new revocation once the cached copy is no longer fresh', async () => {
    const d = await deps();
    const jws = sign(claims({ iss: origin }), state.keys[0]!);
    expect(await codeAt(d, jws, NOW)).toBe('ok');
    state.revoked = [claims().jti];
    expect(await codeAt(d, jws, NOW + 4 * MINUTE)).toBe('ok');
    expect(await codeAt(d, jws, NOW + 5 * MINUTE)).toBe('mandate.revoked');
  });

  it('uses a stale copy for up to an hour while refreshes fail, then reports keys_unavailable', async () => {
    const d = await deps();
    const jws = sign(claims({ iss: origin, exp: NOW / 1000 + 7200 }), state.keys[0]!);
    expect(await codeAt(d, jws, NOW)).toBe('ok');
    state.status = 503;
    expect(await codeAt(d, jws, NOW + 10 * MINUTE)).toBe('ok');
    expect(await codeAt(d, jws, NOW + 60 * MINUTE)).toBe('ok');
    const error = await verifyAt(d, jws, NOW + 60 * MINUTE + 1).catch((e: ProtocolError) => e);
    expect(error).toMatchObject({
      code: 'mandate.issuer_untrusted',
      details: { check: 'issuer', iss: origin, reason: 'keys_unavailable' },
    });
    state.status = 200;
    expect(await codeAt(d, jws, NOW + 61 * MINUTE)).toBe('ok');
  });

  it('refetches at once for a missing kid, at most once a minute', async () => {
    const d = await deps();
    const [first] = state.keys;
    expect(await codeAt(d, sign(claims({ iss: origin }), first!), NOW)).toBe('ok');

    const rotated = keyFromByte(2);
    state.keys = [first!, rotated];
    expect(await codeAt(d, sign(claims({ iss: origin }), rotated), NOW + 1000)).toBe('ok');
    expect(requests).toHaveLength(2);

    const unknown = keyFromByte(3);
    const third = sign(claims({ iss: origin }), unknown);
    expect(await codeAt(d, third, NOW + 2000)).toBe('mandate.signature_invalid');
    expect(requests).toHaveLength(2);
    state.keys = [first!, rotated, unknown];
    expect(await codeAt(d, third, NOW + 30_000)).toBe('mandate.signature_invalid');
    expect(requests).toHaveLength(2);
    expect(await codeAt(d, third, NOW + 1000 + MINUTE)).toBe('ok');
    expect(requests).toHaveLength(3);
  });

  it('does not refetch for a missing kid when the document was fetched by the same verification', async () => {
    const d = await deps();
    expect(await codeAt(d, sign(claims({ iss: origin }), keyFromByte(9)), NOW)).toBe('mandate.signature_invalid');
    expect(requests).toHaveLength(1);
  });

  it('refuses documents without a keys array, and non-JSON answers', async () => {
    const jws = sign(claims({ iss: origin }), state.keys[0]!);
    state.body = JSON.stringify({ revocations: [] });
    expect(await codeAt(await deps(), jws, NOW)).toBe('mandate.issuer_untrusted');
    state.body = '<html>';
    expect(await codeAt(await deps(), jws, NOW)).toBe('mandate.issuer_untrusted');
  });

  it('without the private switch, never contacts loopback issuers', async () => {
    const d = await deps(false);
    const port = new URL(origin).port;
    const jws = sign(claims({ iss: `https://127.0.0.1:${port}` }), state.keys[0]!);
    const error = await verifyAt(d, jws, NOW).catch((e: ProtocolError) => e);
    expect(error).toMatchObject({ code: 'mandate.issuer_untrusted', details: { reason: 'keys_unavailable' } });
    expect(await codeAt(d, sign(claims({ iss: origin }), state.keys[0]!), NOW)).toBe('mandate.issuer_untrusted');
    expect(requests).toHaveLength(0);
  });

  it('the guarded fetcher refuses hosts resolving to loopback', async () => {
    const fetcher = httpIssuerDocumentFetcher({ allowPrivate: false });
    await expect(fetcher('https://localhost')).rejects.toThrow(/does not contact/);
    await expect(fetcher('https://[::1]')).rejects.toThrow(/does not contact/);
    await expect(fetcher('http://example.com')).rejects.toThrow(/HTTPS only/);
  });
});

describe('address guard', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:10.0.0.1',
    '[::1]',
    'not-an-ip',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );

  it('the connection lookup refuses names that resolve to forbidden addresses', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup('localhost', {}, (e) => resolve(e)),
    );
    expect(error).toMatchObject({ name: 'ForbiddenAddressError', code: 'EACCES' });
  });

  it('refuses IP-literal and localhost hosts before any lookup', () => {
    expect(() => assertHostAllowed('127.0.0.1')).toThrow();
    expect(() => assertHostAllowed('[fe80::1]')).toThrow();
    expect(() => assertHostAllowed('api.localhost')).toThrow();
    expect(() => assertHostAllowed('8.8.8.8')).not.toThrow();
    expect(() => assertHostAllowed('issuer.example')).not.toThrow();
  });
});

describe('Cache-Control', () => {
  it.each([
    [undefined, 300_000],
    ['public', 300_000],
    ['max-age=60', 60_000],
    ['public, max-age=86400', 300_000],
    ['no-store', 0],
    ['no-cache, max-age=60', 0],
    ['s-maxage=10', 300_000],
  ])('%s → %i ms', (header, expected) => {
    expect(maxAgeOf(header)).toBe(expected);
  });
});
