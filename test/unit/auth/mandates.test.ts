/**
 * verifyMandate (08 §4.4): every failure code with its status and details, the order of the checks,
 * room and action scope, caps, revocation, and the did:key round trip with the shared vector.
 */
import { describe, expect, it } from 'vitest';
import { type MandateContext, recordMandateCall, verifyMandate } from '../../../src/auth/mandates.js';
import { ProtocolError } from '../../../src/errors.js';
import { didKeyFromPublicKey, MANDATE_TYP, rawPublicKey, signingKeyFromSeed } from '../../../src/receipts/index.js';
import { BASE, claims, didOf, keyFromByte, NOW, NOW_S, rawJws, selfIssued, sign, testDeps } from './fixtures.js';
import { vectors } from '../receipts/vectors.js';

const ISSUER = 'https://issuer.test';
const SLUG = 'k7m3pq2dnx';
const ROOM_URL = `${BASE}/r/${SLUG}`;
const ctx = (overrides: Partial<MandateContext> = {}): MandateContext => ({
  now: NOW,
  roomSlug: SLUG,
  roomUrl: ROOM_URL,
  action: 'discuss',
  ...overrides,
});

async function rejection(promise: Promise<unknown>): Promise<ProtocolError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

async function expectCode(promise: Promise<unknown>, code: string, details?: Record<string, unknown>) {
  const error = await rejection(promise);
  expect(error.code).toBe(code);
  expect(error.status).toBe(401);
  if (details) expect(error.details).toEqual(details);
  return error;
}

async function httpsDeps(options: { revoked?: string[] } = {}) {
  const deps = await testDeps();
  const key = keyFromByte(7);
  deps.network.documents.set(ISSUER, { keys: [key], ...(options.revoked ? { revoked: options.revoked } : {}) });
  return { deps, key };
}

describe('verifyMandate: a valid mandate', () => {
  it('returns the verified claims of an HTTPS-issued mandate', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(
      claims({ nbf: NOW_S - 10 }, { weight_cap: 3, rate_caps: { limit: 5, window_seconds: 60 }, trust_stage: 1 }),
      key,
    );
    const verified = await verifyMandate(jws, ctx(), deps);
    expect(verified).toMatchObject({
      iss: ISSUER,
      sub: 'did:key:z6MkAgent',
      jti: 'urn:uuid:00000000-0000-4000-8000-000000000001',
      exp: NOW_S + 3600,
      nbf: NOW_S - 10,
      rooms: ['*'],
      actions: ['choose', 'discuss'],
      weightCap: 3,
      rateCaps: { limit: 5, window_seconds: 60 },
      trustStage: 1,
      issuerKind: 'https',
      issuerPrincipal: ISSUER,
    });
    expect(verified.rateKey).toEqual(expect.any(String));
  });

  it('accepts the discovery-URL form of iss and shares the rate key with the origin form', async () => {
    const { deps, key } = await httpsDeps();
    const a = await verifyMandate(sign(claims(), key), ctx(), deps);
    const b = await verifyMandate(sign(claims({ iss: `${ISSUER}/.well-known/svc.json` }), key), ctx(), deps);
    expect(b.issuerKind).toBe('https');
    expect(b.rateKey).toBe(a.rateKey);
  });

  it("recognises the service's own mandates in both iss forms, keys from the keyring", async () => {
    const deps = await testDeps({ allowlist: ['https://only.example'] });
    for (const iss of [BASE, `${BASE}/.well-known/svc.json`]) {
      const jws = sign(claims({ iss }), deps.keyring.current);
      const verified = await verifyMandate(jws, ctx(), deps);
      expect(verified.issuerKind).toBe('self');
      expect(verified.issuerPrincipal).toBe(BASE);
    }
    expect(deps.network.fetches).toBe(0);
  });

  it('ignores action names outside the vocabulary', async () => {
    const { deps, key } = await httpsDeps();
    const verified = await verifyMandate(sign(claims({}, { actions: ['discuss', 'fly', 'vote'] }), key), ctx(), deps);
    expect(verified.actions).toEqual(['discuss']);
  });
});

describe('did:key mandates', () => {
  const vector = vectors.did_key;

  it('round-trips the did_key vector: sign with the seed, verify through the DID alone', async () => {
    const key = signingKeyFromSeed(Buffer.from(vector.seed_hex, 'hex'));
    expect(key.jwk.x).toBe(vector.public_x);
    expect(didKeyFromPublicKey(rawPublicKey(key.publicKey))).toBe(vector.did);
    const deps = await testDeps();
    const verified = await verifyMandate(selfIssued(key), ctx(), deps);
    expect(verified).toMatchObject({ iss: vector.did, issuerKind: 'did:key', issuerPrincipal: vector.did });
    expect(deps.network.fetches).toBe(0);
  });

  it('requires the header kid to be the full DID', async () => {
    const key = keyFromByte(3);
    const deps = await testDeps();
    const jws = sign(claims({ iss: didOf(key) }), key, { kid: key.kid });
    await expectCode(verifyMandate(jws, ctx(), deps), 'mandate.signature_invalid', { check: 'signature' });
  });

  it('refuses a DID that is not an Ed25519 did:key as malformed', async () => {
    const deps = await testDeps();
    const key = keyFromByte(3);
    for (const iss of [
      'did:web:example.com',
      'did:key:z6MkBAD0',
      'did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme',
    ]) {
      const jws = sign(claims({ iss }), key, { kid: iss });
      await expectCode(verifyMandate(jws, ctx(), deps), 'mandate.malformed');
    }
  });
});

describe('1. parse → mandate.malformed', () => {
  const key = keyFromByte(7);
  const header = { alg: 'EdDSA', typ: MANDATE_TYP, kid: key.kid };
  const cases: [string, string][] = [
    ['two segments', 'abc.def'],
    ['four segments', `${sign(claims(), key)}.x`],
    ['an empty signature', `${sign(claims(), key).split('.').slice(0, 2).join('.')}.`],
    ['padding in a segment', rawJws(header, claims()).replace(/\.[^.]+$/, '.AAAA==')],
    ['a non-base64url character', rawJws(header, claims(), 'AA+A')],
    ['a header that is not JSON', rawJws(Buffer.from('not json').toString('base64url'), claims())],
    ['a payload that is an array', rawJws(header, ['iss'])],
    ['alg ES256', sign(claims(), key, { alg: 'ES256' })],
    ['alg none', sign(claims(), key, { alg: 'none' })],
    ['typ JWT', sign(claims(), key, { typ: 'JWT' })],
    ['a receipt typ', sign(claims(), key, { typ: 'svc-receipt+jwt' })],
    ['crit', sign(claims(), key, { crit: ['exp'] })],
    ['no kid', sign(claims(), key, { kid: '' })],
    ['no iss', sign(claims({ iss: undefined }), key)],
    ['iss with a path', sign(claims({ iss: 'https://issuer.test/agents' }), key)],
    ['iss with a query', sign(claims({ iss: 'https://issuer.test/?a=1' }), key)],
    ['iss not a URL', sign(claims({ iss: 'issuer.test' }), key)],
    ['iss ftp', sign(claims({ iss: 'ftp://issuer.test' }), key)],
    ['no sub', sign(claims({ sub: undefined }), key)],
    ['sub too long', sign(claims({ sub: 'x'.repeat(513) }), key)],
    ['jti too long', sign(claims({ jti: 'x'.repeat(257) }), key)],
    ['exp as a string', sign(claims({ exp: String(NOW_S + 60) }), key)],
    ['exp fractional', sign(claims({ exp: NOW_S + 0.5 }), key)],
    ['nbf null', sign(claims({ nbf: null }), key)],
    ['no svc', sign(claims({ svc: undefined }), key)],
    ['empty rooms', sign(claims({}, { rooms: [] }), key)],
    ['rooms not strings', sign(claims({}, { rooms: [1] }), key)],
    ['actions missing', sign(claims({}, { actions: undefined }), key)],
    ['weight_cap 0', sign(claims({}, { weight_cap: 0 }), key)],
    ['rate_caps without window', sign(claims({}, { rate_caps: { limit: 3 } }), key)],
    ['trust_stage 3', sign(claims({}, { trust_stage: 3 }), key)],
    ['trust_stage "1"', sign(claims({}, { trust_stage: '1' }), key)],
  ];

  it.each(cases)('refuses %s', async (_name, jws) => {
    const { deps } = await httpsDeps();
    const error = await expectCode(verifyMandate(jws, ctx(), deps), 'mandate.malformed');
    expect(error.details).toEqual({ check: 'parse', reason: expect.any(String) });
    expect(error.message).not.toContain(jws);
  });

  it('names trust_stage as the reason', async () => {
    const { deps } = await httpsDeps();
    await expectCode(verifyMandate(sign(claims({}, { trust_stage: 3 }), key), ctx(), deps), 'mandate.malformed', {
      check: 'parse',
      reason: 'trust_stage',
    });
  });
});

describe('2. issuer trust → mandate.issuer_untrusted', () => {
  it('refuses HTTPS issuers off the allowlist, and did:key by default once one is set', async () => {
    const deps = await testDeps({ allowlist: ['https://trusted.test'] });
    const key = keyFromByte(7);
    deps.network.documents.set('https://trusted.test', { keys: [key] });
    await expect(verifyMandate(sign(claims({ iss: 'https://trusted.test' }), key), ctx(), deps)).resolves.toBeTruthy();
    await expectCode(verifyMandate(sign(claims(), key), ctx(), deps), 'mandate.issuer_untrusted', {
      check: 'issuer',
      iss: ISSUER,
      reason: 'not_allowlisted',
    });
    await expectCode(verifyMandate(selfIssued(key), ctx(), deps), 'mandate.issuer_untrusted', {
      check: 'issuer',
      iss: didOf(key),
      reason: 'self_issued_disabled',
    });
  });

  it('follows the explicit self-issued switch either way', async () => {
    const key = keyFromByte(7);
    const off = await testDeps({ allowSelfIssued: false });
    await expectCode(verifyMandate(selfIssued(key), ctx(), off), 'mandate.issuer_untrusted');
    const on = await testDeps({ allowlist: ['https://trusted.test'], allowSelfIssued: true });
    await expect(verifyMandate(selfIssued(key), ctx(), on)).resolves.toMatchObject({ issuerKind: 'did:key' });
  });

  it('refuses plain http issuers unless private issuers are allowed', async () => {
    const deps = await testDeps();
    const key = keyFromByte(7);
    deps.network.documents.set('http://issuer.test', { keys: [key] });
    await expectCode(
      verifyMandate(sign(claims({ iss: 'http://issuer.test' }), key), ctx(), deps),
      'mandate.issuer_untrusted',
      {
        check: 'issuer',
        iss: 'http://issuer.test',
        reason: 'not_https',
      },
    );
    expect(deps.network.fetches).toBe(0);
  });

  it('reports keys_unavailable when the issuer document cannot be fetched', async () => {
    const deps = await testDeps();
    deps.network.documents.set(ISSUER, new Error('connection refused'));
    await expectCode(verifyMandate(sign(claims(), keyFromByte(7)), ctx(), deps), 'mandate.issuer_untrusted', {
      check: 'issuer',
      iss: ISSUER,
      reason: 'keys_unavailable',
    });
  });
});

describe('3. signature → mandate.signature_invalid', () => {
  it('refuses an unknown kid, a foreign key and a tampered payload', async () => {
    const { deps, key } = await httpsDeps();
    const stranger = keyFromByte(9);
    await expectCode(verifyMandate(sign(claims(), stranger), ctx(), deps), 'mandate.signature_invalid', {
      check: 'signature',
    });
    await expectCode(
      verifyMandate(sign(claims(), stranger, { kid: key.kid }), ctx(), deps),
      'mandate.signature_invalid',
    );
    const [h, , s] = sign(claims(), key).split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims({ sub: 'did:key:z6MkOther' }))).toString('base64url')}.${s}`;
    await expectCode(verifyMandate(tampered, ctx(), deps), 'mandate.signature_invalid');
  });

  it("verifies the bytes as received: a re-serialised payload with the issuer's signature fails", async () => {
    const { deps, key } = await httpsDeps();
    const [h, p, s] = sign(claims(), key).split('.') as [string, string, string];
    const spaced = Buffer.from(JSON.stringify(JSON.parse(Buffer.from(p, 'base64url').toString()), null, 1)).toString(
      'base64url',
    );
    await expectCode(verifyMandate(`${h}.${spaced}.${s}`, ctx(), deps), 'mandate.signature_invalid');
  });

  it("refuses a kid the service's keyring does not hold", async () => {
    const deps = await testDeps();
    await expectCode(
      verifyMandate(sign(claims({ iss: BASE }), keyFromByte(5)), ctx(), deps),
      'mandate.signature_invalid',
    );
  });
});

describe('4. time → mandate.expired / mandate.not_yet_valid', () => {
  it('is expired exactly at exp, with no leeway', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({ exp: NOW_S + 10 }), key);
    await expect(verifyMandate(jws, ctx({ now: NOW + 9_999 }), deps)).resolves.toBeTruthy();
    await expectCode(verifyMandate(jws, ctx({ now: NOW + 10_000 }), deps), 'mandate.expired', {
      check: 'time',
      exp: NOW_S + 10,
    });
  });

  it('is not yet valid before nbf', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({ nbf: NOW_S + 5 }), key);
    await expectCode(verifyMandate(jws, ctx({ now: NOW + 4_999 }), deps), 'mandate.not_yet_valid', {
      check: 'time',
      nbf: NOW_S + 5,
    });
    await expect(verifyMandate(jws, ctx({ now: NOW + 5_000 }), deps)).resolves.toBeTruthy();
  });
});

describe('5. room scope → mandate.room_not_in_scope', () => {
  it.each([['*'], [SLUG], [ROOM_URL], [`${ROOM_URL}/`], [`urn:svc:room:${SLUG}`]])('accepts %s', async (room) => {
    const { deps, key } = await httpsDeps();
    await expect(verifyMandate(sign(claims({}, { rooms: ['other', room] }), key), ctx(), deps)).resolves.toBeTruthy();
  });

  it.each([
    ['another slug', 'zzzzzzzzzz'],
    ['another base', `https://elsewhere.test/r/${SLUG}`],
    ['a different case', SLUG.toUpperCase()],
    ['a URN of another kind', `urn:svc:agent:${SLUG}`],
  ])('refuses %s', async (_name, room) => {
    const { deps, key } = await httpsDeps();
    await expectCode(
      verifyMandate(sign(claims({}, { rooms: [room] }), key), ctx(), deps),
      'mandate.room_not_in_scope',
      {
        check: 'room',
      },
    );
  });

  it('skips the room check without a room (room creation)', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({}, { rooms: ['zzzzzzzzzz'] }), key);
    const verified = await verifyMandate(jws, ctx({ roomSlug: null, roomUrl: null, action: null }), deps);
    expect(verified.rateKey).toBeNull();
  });
});

describe('6. action scope → mandate.action_not_in_scope', () => {
  it('needs the named action', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({}, { actions: ['discuss'] }), key);
    await expectCode(verifyMandate(jws, ctx({ action: 'choose' }), deps), 'mandate.action_not_in_scope', {
      check: 'action',
      action: 'choose',
    });
    await expect(verifyMandate(jws, ctx({ action: null }), deps)).resolves.toBeTruthy();
  });

  it('lets a join through with member_join_request or any acting action, not otherwise', async () => {
    const { deps, key } = await httpsDeps();
    const join = ctx({ action: 'member_join_request' });
    for (const actions of [['member_join_request'], ['discuss'], ['coalition_offer'], ['close']]) {
      await expect(verifyMandate(sign(claims({}, { actions }), key), join, deps)).resolves.toBeTruthy();
    }
    for (const actions of [['member_leave'], ['revoke_own_action'], ['unknown']]) {
      await expectCode(verifyMandate(sign(claims({}, { actions }), key), join, deps), 'mandate.action_not_in_scope', {
        check: 'action',
        action: 'member_join_request',
      });
    }
    const joinOnly = sign(claims({}, { actions: ['member_join_request'] }), key);
    await expectCode(verifyMandate(joinOnly, ctx({ action: 'discuss' }), deps), 'mandate.action_not_in_scope');
  });
});

describe('7. caps → mandate.weight_cap_exceeded, mandate.rate_cap_exceeded', () => {
  it('refuses a weight above weight_cap', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({}, { weight_cap: 9 }), key);
    await expect(verifyMandate(jws, ctx({ action: 'choose', weight: 9 }), deps)).resolves.toBeTruthy();
    await expectCode(verifyMandate(jws, ctx({ action: 'choose', weight: 10 }), deps), 'mandate.weight_cap_exceeded', {
      check: 'weight',
      weight_cap: 9,
      requested: 10,
    });
  });

  it('counts recorded calls per (iss, sub, room) and answers Retry-After until the oldest leaves', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({}, { rate_caps: { limit: 2, window_seconds: 60 } }), key);
    const first = await verifyMandate(jws, ctx(), deps);
    await recordMandateCall(deps.rateCaps, first, NOW);
    const second = await verifyMandate(jws, ctx({ now: NOW + 20_000 }), deps);
    await recordMandateCall(deps.rateCaps, second, NOW + 20_000);

    const error = await expectCode(verifyMandate(jws, ctx({ now: NOW + 30_000 }), deps), 'mandate.rate_cap_exceeded', {
      check: 'rate',
      limit: 2,
      window_seconds: 60,
      retry_after_seconds: 30,
    });
    expect(error.headers).toEqual({ 'retry-after': '30' });

    // Reads and other rooms are not capped; the same agent under another mandate of the issuer is.
    await expect(verifyMandate(jws, ctx({ now: NOW + 30_000, action: null }), deps)).resolves.toBeTruthy();
    await expect(
      verifyMandate(jws, ctx({ now: NOW + 30_000, roomSlug: 'otherroom1', roomUrl: null }), deps),
    ).resolves.toBeTruthy();
    const sibling = sign(claims({ jti: 'urn:uuid:sibling' }, { rate_caps: { limit: 2, window_seconds: 60 } }), key);
    await expectCode(verifyMandate(sibling, ctx({ now: NOW + 30_000 }), deps), 'mandate.rate_cap_exceeded');
    // Webhook registration counts although it needs no action.
    await expectCode(
      verifyMandate(jws, ctx({ now: NOW + 30_000, action: null, mutating: true }), deps),
      'mandate.rate_cap_exceeded',
    );

    await expect(verifyMandate(jws, ctx({ now: NOW + 60_000 }), deps)).resolves.toBeTruthy();
  });

  it('checks the weight before the rate', async () => {
    const { deps, key } = await httpsDeps();
    const jws = sign(claims({}, { weight_cap: 1, rate_caps: { limit: 1, window_seconds: 60 } }), key);
    await recordMandateCall(deps.rateCaps, await verifyMandate(jws, ctx(), deps), NOW);
    await expectCode(verifyMandate(jws, ctx({ action: 'choose', weight: 2 }), deps), 'mandate.weight_cap_exceeded');
  });
});

describe('8. revocation → mandate.revoked', () => {
  it("refuses a jti on the HTTPS issuer's revocations", async () => {
    const { deps, key } = await httpsDeps({ revoked: ['urn:uuid:00000000-0000-4000-8000-000000000001'] });
    await expectCode(verifyMandate(sign(claims(), key), ctx(), deps), 'mandate.revoked', { check: 'revocation' });
    await expect(verifyMandate(sign(claims({ jti: 'urn:uuid:fine' }), key), ctx(), deps)).resolves.toBeTruthy();
  });

  it('refuses a jti the service itself revoked', async () => {
    const deps = await testDeps();
    deps.ownRevoked.add('urn:uuid:hosted');
    const jws = sign(claims({ iss: BASE, jti: 'urn:uuid:hosted' }), deps.keyring.current);
    await expectCode(verifyMandate(jws, ctx(), deps), 'mandate.revoked', { check: 'revocation' });
  });
});

describe('check order (08 §4.4)', () => {
  it('reports the first failing check as each earlier one is mended', async () => {
    const { deps, key } = await httpsDeps({ revoked: ['urn:uuid:revoked'] });
    const stranger = keyFromByte(9);
    await recordMandateCall(
      deps.rateCaps,
      await verifyMandate(sign(claims({ jti: 'urn:uuid:seed' }), key), ctx(), deps),
      NOW,
    );
    const everythingWrong = {
      iss: 'https://untrusted.test',
      jti: 'urn:uuid:revoked',
      nbf: NOW_S + 100,
      exp: NOW_S - 1,
    };
    const svcWrong = {
      rooms: ['zzzzzzzzzz'],
      actions: ['ask'],
      weight_cap: 1,
      rate_caps: { limit: 1, window_seconds: 60 },
      trust_stage: 3,
    };
    const call = (payload: Record<string, unknown>, signer = stranger) =>
      verifyMandate(sign(payload, signer), ctx({ action: 'choose', weight: 2 }), deps);

    const steps: [string, () => Promise<unknown>][] = [
      ['mandate.malformed', () => call(claims(everythingWrong, svcWrong))],
      ['mandate.issuer_untrusted', () => call(claims(everythingWrong, { ...svcWrong, trust_stage: 2 }))],
      [
        'mandate.signature_invalid',
        () => call(claims({ ...everythingWrong, iss: ISSUER }, { ...svcWrong, trust_stage: 2 })),
      ],
      [
        'mandate.expired',
        () => call(claims({ ...everythingWrong, iss: ISSUER }, { ...svcWrong, trust_stage: 2 }), key),
      ],
      [
        'mandate.not_yet_valid',
        () =>
          call(claims({ ...everythingWrong, iss: ISSUER, exp: NOW_S + 3600 }, { ...svcWrong, trust_stage: 2 }), key),
      ],
    ];
    const timeOk = { ...everythingWrong, iss: ISSUER, exp: NOW_S + 3600, nbf: NOW_S };
    steps.push(
      ['mandate.room_not_in_scope', () => call(claims(timeOk, { ...svcWrong, trust_stage: 2 }), key)],
      ['mandate.action_not_in_scope', () => call(claims(timeOk, { ...svcWrong, trust_stage: 2, rooms: [SLUG] }), key)],
      [
        'mandate.weight_cap_exceeded',
        () => call(claims(timeOk, { ...svcWrong, trust_stage: 2, rooms: [SLUG], actions: ['choose'] }), key),
      ],
      [
        'mandate.rate_cap_exceeded',
        () =>
          call(claims(timeOk, { ...svcWrong, trust_stage: 2, rooms: [SLUG], actions: ['choose'], weight_cap: 2 }), key),
      ],
      [
        'mandate.revoked',
        () =>
          call(
            claims(timeOk, {
              rooms: [SLUG],
              actions: ['choose'],
              weight_cap: 2,
              rate_caps: { limit: 2, window_seconds: 60 },
            }),
            key,
          ),
      ],
    );
    for (const [code, attempt] of steps) {
      expect((await rejection(attempt())).code, code).toBe(code);
    }
    await expect(
      call(claims({ ...timeOk, jti: 'urn:uuid:ok' }, { rooms: [SLUG], actions: ['choose'], weight_cap: 2 }), key),
    ).resolves.toBeTruthy();
  });
});

describe('verifyMandate: subject namespace and audience (docs/architecture.md, Credentials)', () => {
  it('accepts urn:svc:agent subjects only in mandates this service issued', async () => {
    const { deps, key } = await httpsDeps();
    const own = await verifyMandate(
      sign(claims({ iss: BASE, sub: 'urn:svc:agent:acct_abc' }), deps.keyring.current),
      ctx(),
      deps,
    );
    expect(own.sub).toBe('urn:svc:agent:acct_abc');
    for (const sub of ['urn:svc:agent:acct_abc', 'URN:SVC:AGENT:acct_abc']) {
      const https = await expectCode(verifyMandate(sign(claims({ sub }), key), ctx(), deps), 'mandate.malformed', {
        check: 'parse',
        reason: 'foreign_hosted_subject',
      });
      expect(https.message).toMatch(/hosted-agent namespace/);
      const agent = keyFromByte(11);
      await expectCode(verifyMandate(selfIssued(agent, { sub }), ctx(), deps), 'mandate.malformed', {
        check: 'parse',
        reason: 'foreign_hosted_subject',
      });
    }
  });

  it('refuses a subject of the form receipts give token ballots (participant:<id>), from any issuer', async () => {
    const { deps, key } = await httpsDeps();
    for (const sub of ['participant:4e1d0000-0000-4000-8000-000000000001', 'Participant:x']) {
      for (const jws of [
        sign(claims({ sub }), key),
        selfIssued(keyFromByte(12), { sub }),
        sign(claims({ iss: BASE, sub }), deps.keyring.current),
      ]) {
        const error = await expectCode(verifyMandate(jws, ctx(), deps), 'mandate.malformed', {
          check: 'parse',
          reason: 'reserved_subject',
        });
        expect(error.message).toMatch(/participant token/);
      }
    }
    // A subject that only contains the word is anyone's.
    await expect(verifyMandate(sign(claims({ sub: 'urn:x:participant:1' }), key), ctx(), deps)).resolves.toMatchObject({
      sub: 'urn:x:participant:1',
    });
  });

  it('accepts a mandate without aud or naming this service, and refuses one addressed elsewhere', async () => {
    const { deps, key } = await httpsDeps();
    for (const aud of [undefined, BASE, `${BASE}/`, [BASE], ['https://other.example', BASE]]) {
      const jws = sign(claims(aud === undefined ? {} : { aud }), key);
      await expect(verifyMandate(jws, ctx(), deps), JSON.stringify(aud)).resolves.toMatchObject({ iss: ISSUER });
    }
    for (const aud of ['https://other.example', [], ['https://other.example'], `${BASE}/r/x`]) {
      const error = await expectCode(verifyMandate(sign(claims({ aud }), key), ctx(), deps), 'mandate.malformed', {
        check: 'parse',
        reason: 'audience',
      });
      expect(error.message).toMatch(/addressed to another service/);
    }
    await expectCode(verifyMandate(sign(claims({ aud: 42 }), key), ctx(), deps), 'mandate.malformed', {
      check: 'parse',
      reason: 'claims',
    });
  });
});
