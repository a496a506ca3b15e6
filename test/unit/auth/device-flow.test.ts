/** The device flow's rules without HTTP (08 §6): parameters, polling, decisions, issuing, revocation. */
import { beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT, DeviceFlow, normalizeUserCode, OAuthError } from '../../../src/auth/device-flow.js';
import { MemoryIdentityStore } from '../../../src/auth/identity-store.js';
import { createIssuerTrust } from '../../../src/auth/issuers.js';
import { type MandateContext, verifyMandate } from '../../../src/auth/mandates.js';
import { MemoryRateCounters } from '../../../src/auth/rate-limit.js';
import { hashSecret } from '../../../src/auth/secrets.js';
import { ProtocolError } from '../../../src/errors.js';
import { type Keyring, loadKeyring } from '../../../src/receipts/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { BASE } from './fixtures.js';

const ADMIN = 'admin-token-of-at-least-thirty-two-characters';

let clock: ManualClock;
let store: MemoryIdentityStore;
let keyring: Keyring;
let flow: DeviceFlow;

beforeEach(async () => {
  clock = new ManualClock();
  store = new MemoryIdentityStore();
  keyring = await loadKeyring({});
  flow = new DeviceFlow({
    store,
    keyring,
    now: () => clock.now(),
    baseUrl: () => BASE,
    adminTokenHash: hashSecret(ADMIN),
  });
});

async function oauthError(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

const poll = (deviceCode: string, extra: Record<string, unknown> = {}) =>
  flow.token({ grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...extra });

describe('device authorization request', () => {
  it('answers the RFC 8628 fields with a dc_ device code and an XXXX-XXXX user code', async () => {
    const started = await flow.authorize({ client_id: 'agent-cli' });
    expect(started).toEqual({
      device_code: expect.stringMatching(/^dc_[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${BASE}/oauth/device`,
      verification_uri_complete: `${BASE}/oauth/device?user_code=${started.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const grant = await store.deviceGrant(hashSecret(started.device_code));
    expect(grant).toMatchObject({ clientId: 'agent-cli', status: 'pending', resource: null, intervalSeconds: 5 });
    expect(grant?.actions).toHaveLength(11);
  });

  it.each([
    [{}, 'invalid_request'],
    [{ client_id: '' }, 'invalid_request'],
    [{ client_id: 'x'.repeat(101) }, 'invalid_request'],
    [{ client_id: 42 }, 'invalid_request'],
    [{ client_id: ['a', 'b'] }, 'invalid_request'],
    [{ client_id: 'a', scope: 'svc:choose svc:fly' }, 'invalid_scope'],
    [{ client_id: 'a', scope: 'choose' }, 'invalid_scope'],
    [{ client_id: 'a', resource: 'https://elsewhere.test' }, 'invalid_target'],
    [{ client_id: 'a', from: 'x'.repeat(501) }, 'invalid_request'],
  ])('refuses %j with %s', async (params, code) => {
    const error = await oauthError(flow.authorize(params));
    expect(error.error).toBe(code);
    expect(error.status).toBe(400);
  });

  it('keeps the requested scopes in vocabulary order and the resource', async () => {
    const started = await flow.authorize({ client_id: 'a', scope: ' svc:discuss  svc:choose ', resource: `${BASE}/` });
    const grant = await store.deviceGrant(hashSecret(started.device_code));
    expect(grant).toMatchObject({ actions: ['choose', 'discuss'], resource: BASE });
  });

  it('is unavailable (503) without an admin token', async () => {
    const off = new DeviceFlow({ store, keyring, now: () => clock.now(), baseUrl: () => BASE, adminTokenHash: null });
    expect(off.enabled).toBe(false);
    const error = await oauthError(off.authorize({ client_id: 'a' }));
    expect(error).toMatchObject({ error: 'invalid_request', status: 503 });
    expect(error.description).toMatch(/admin token/);
  });
});

describe('polling the token endpoint', () => {
  it('walks pending → slow_down → pending → approved → issued, then invalid_grant', async () => {
    const started = await flow.authorize({ client_id: 'agent-cli', scope: 'svc:choose svc:discuss' });
    expect((await oauthError(poll(started.device_code))).error).toBe('authorization_pending');

    clock.advance(2000);
    expect((await oauthError(poll(started.device_code))).error).toBe('slow_down');
    // The interval is now 10 s, counted from the last poll.
    clock.advance(9000);
    expect((await oauthError(poll(started.device_code))).error).toBe('slow_down');
    clock.advance(15_000);
    expect((await oauthError(poll(started.device_code))).error).toBe('authorization_pending');

    expect(await flow.decide(started.user_code.toLowerCase(), true)).toEqual({
      user_code: started.user_code,
      status: 'approved',
    });
    clock.advance(15_000);
    const issued = await poll(started.device_code, { client_id: 'agent-cli' });
    expect(issued).toMatchObject({
      access_token: expect.stringMatching(/^rk_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 2_592_000,
      scope: 'svc:choose svc:discuss',
      resource: null,
      public_id: expect.stringMatching(/^acct_[a-z2-7]{16}$/),
    });

    clock.advance(15_000);
    expect((await oauthError(poll(started.device_code))).error).toBe('invalid_grant');
  });

  it('issues a mandate signed by the service that its own verifier accepts', async () => {
    const started = await flow.authorize({ client_id: 'a', scope: 'svc:choose' });
    await flow.decide(started.user_code, true);
    const issued = await poll(started.device_code);
    const [h, p] = issued.mandate.split('.') as [string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const iat = Math.floor(clock.now() / 1000);
    expect(header).toEqual({ alg: 'EdDSA', kid: keyring.current.kid, typ: 'svc-mandate+jwt' });
    expect(payload).toEqual({
      iss: BASE,
      sub: `urn:svc:agent:${issued.public_id}`,
      jti: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/),
      iat,
      nbf: iat,
      exp: iat + 2_592_000,
      svc: {
        rooms: ['*'],
        actions: ['choose'],
        weight_cap: 9,
        rate_caps: { limit: 100, window_seconds: 3600 },
        trust_stage: 2,
      },
    });

    const issuers = createIssuerTrust({
      allowlist: [],
      allowSelfIssued: undefined,
      allowPrivate: false,
      keyring,
      baseUrl: () => BASE,
      isOwnRevoked: (jti) => store.isRevoked(jti),
    });
    const deps = { issuers, rateCaps: new MemoryRateCounters(), baseUrl: () => BASE };
    const ctx: MandateContext = { now: clock.now(), roomSlug: 'k7m3pq2dnx', roomUrl: null, action: 'choose' };
    const verified = await verifyMandate(issued.mandate, ctx, deps);
    expect(verified).toMatchObject({ issuerKind: 'self', weightCap: 9, trustStage: 2 });

    await flow.revoke({ token: issued.access_token }, ADMIN);
    await expect(verifyMandate(issued.mandate, ctx, deps)).rejects.toMatchObject({ code: 'mandate.revoked' });
  });

  it('lets a hosted key tell the caller its account and mandate', async () => {
    const started = await flow.authorize({ client_id: 'a', scope: 'svc:choose' });
    await flow.decide(started.user_code, true);
    const issued = await poll(started.device_code);
    const payload = JSON.parse(Buffer.from(issued.mandate.split('.')[1]!, 'base64url').toString());
    expect(await flow.hostedKey(issued.access_token)).toEqual({
      publicId: issued.public_id,
      mandateJti: payload.jti,
      actions: ['choose'],
      expiresAt: clock.now() + 2_592_000_000,
    });
  });

  it('answers access_denied, expired_token, and refuses other clients and grant types', async () => {
    const denied = await flow.authorize({ client_id: 'a' });
    expect(await flow.decide(denied.user_code, false)).toMatchObject({ status: 'denied' });
    expect((await oauthError(poll(denied.device_code))).error).toBe('access_denied');

    const other = await flow.authorize({ client_id: 'a' });
    expect((await oauthError(poll(other.device_code, { client_id: 'b' }))).error).toBe('invalid_grant');
    expect((await oauthError(poll('dc_unknown'))).error).toBe('invalid_grant');
    expect((await oauthError(flow.token({ grant_type: 'authorization_code', code: 'x' }))).error).toBe(
      'unsupported_grant_type',
    );
    expect((await oauthError(flow.token({ device_code: other.device_code }))).error).toBe('invalid_request');
    expect((await oauthError(flow.token({ grant_type: DEVICE_CODE_GRANT }))).error).toBe('invalid_request');

    clock.advance(600_000);
    expect((await oauthError(poll(other.device_code))).error).toBe('expired_token');
  });
});

describe('operator decisions', () => {
  async function decideError(userCode: unknown, approve = true): Promise<ProtocolError> {
    const error = await flow.decide(userCode, approve).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe('input.invalid');
    return error as ProtocolError;
  }

  it('matches user codes case-insensitively with the hyphen optional', async () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode(' BCDFGHJK ')).toBe('BCDFGHJK');
    expect(normalizeUserCode('BCDF-GHJA')).toBeNull();
    expect(normalizeUserCode('BCDF-GHJ')).toBeNull();
    const started = await flow.authorize({ client_id: 'a' });
    expect(await flow.decide(started.user_code.replace('-', '').toLowerCase(), true)).toMatchObject({
      status: 'approved',
    });
  });

  it('answers a repeated decision the same way and refuses a change', async () => {
    const started = await flow.authorize({ client_id: 'a' });
    await flow.decide(started.user_code, true);
    expect(await flow.decide(started.user_code, true)).toMatchObject({ status: 'approved' });
    const error = await decideError(started.user_code, false);
    expect(error.details).toEqual({ field: 'user_code' });
  });

  it('refuses unknown, malformed and expired user codes', async () => {
    await decideError('BCDF-GHJK');
    await decideError('nope');
    await decideError(42);
    const started = await flow.authorize({ client_id: 'a' });
    expect(await flow.pendingRequest(started.user_code)).toMatchObject({ clientId: 'a' });
    clock.advance(600_000);
    await decideError(started.user_code);
    expect(await flow.pendingRequest(started.user_code)).toBeNull();
  });
});

describe('revocation (RFC 7009)', () => {
  async function issue() {
    const started = await flow.authorize({ client_id: 'a' });
    await flow.decide(started.user_code, true);
    return poll(started.device_code);
  }

  it('revokes by the key itself or by the admin token and appends the mandate jti once', async () => {
    const mine = await issue();
    const theirs = await issue();
    await flow.revoke({ token: mine.access_token }, mine.access_token);
    await flow.revoke({ token: theirs.access_token }, ADMIN);
    await flow.revoke({ token: theirs.access_token }, ADMIN);
    await flow.revoke({ token: 'rk_unknown' }, ADMIN);
    const jtiOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).jti;
    expect(await flow.revocations()).toEqual([
      { jti: jtiOf(mine.mandate), revoked_at: new Date(clock.now()).toISOString(), reason: 'key revoked' },
      { jti: jtiOf(theirs.mandate), revoked_at: new Date(clock.now()).toISOString(), reason: 'key revoked' },
    ]);
    expect(await flow.hostedKey(mine.access_token)).toBeNull();
  });

  it('needs the admin token or the same key, and a token parameter', async () => {
    const key = await issue();
    const other = await issue();
    expect(await oauthError(flow.revoke({ token: key.access_token }, undefined))).toMatchObject({
      error: 'invalid_client',
      status: 401,
    });
    expect(await oauthError(flow.revoke({ token: key.access_token }, other.access_token))).toMatchObject({
      error: 'invalid_client',
    });
    expect(await oauthError(flow.revoke({}, ADMIN))).toMatchObject({ error: 'invalid_request', status: 400 });
    expect(await flow.hostedKey(key.access_token)).not.toBeNull();
  });

  it('forgets expired hosted keys', async () => {
    const key = await issue();
    clock.advance(2_592_000_000);
    expect(await flow.hostedKey(key.access_token)).toBeNull();
    expect(await flow.hostedKey('t_not_a_hosted_key')).toBeNull();
  });
});
