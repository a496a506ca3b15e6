/**
 * The device authorization flow over real HTTP (08 §6), as an agent and an operator would drive it:
 * the agent polls at the interval it was given (slowing down when told), the operator approves with
 * the admin token, the agent receives a hosted key and a mandate that verifies against the JWKS with
 * plain node:crypto, and revoking the key lists the mandate's jti in discovery.
 */
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMandate } from '../../src/auth/mandates.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const ADMIN = 'e2e-admin-token-0123456789abcdef0123456789';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function form(base: string, url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return call(base, 'POST', url, { raw: new URLSearchParams(fields).toString(), headers: { ...FORM, ...headers } });
}

function decodeSegment(segment: string): any {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
}

/** Verifies a compact JWS against a JWKS as an outside client would, with node:crypto only. */
function verifyWithJwks(jws: string, jwks: { keys: { kid: string; x: string }[] }) {
  const [h, p, s] = jws.split('.') as [string, string, string];
  const header = decodeSegment(h);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no key ${header.kid}`);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  return {
    ok: verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url')),
    header,
    payload: decodeSegment(p),
  };
}

/**
 * An agent's polling loop: waits `interval` seconds (on the manual clock) between polls, adds 5 s
 * after each slow_down, and calls `duringWait` once per wait so the test can act meanwhile.
 */
async function pollForToken(
  svc: RunningService,
  clock: ManualClock,
  started: { device_code: string; interval: number },
  duringWait: (round: number) => Promise<void>,
) {
  let interval = started.interval;
  const seen: string[] = [];
  for (let round = 0; round < 10; round++) {
    clock.advance(interval * 1000);
    await duringWait(round);
    const res = await call(svc.base, 'POST', '/oauth/token', {
      body: {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.device_code,
        client_id: 'agent-cli',
      },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    if (res.status === 200) return { token: res.body, seen };
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
    seen.push(res.body.error);
    if (res.body.error === 'slow_down') interval += 5;
    else if (res.body.error !== 'authorization_pending') throw new Error(`unexpected ${res.body.error}`);
  }
  throw new Error('never approved');
}

describe('device authorization flow over HTTP', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('issues a hosted key and a verifiable mandate after operator approval, and revokes it', async () => {
    const { base } = svc;
    const started = await form(
      base,
      '/oauth/device_authorization',
      {
        client_id: 'agent-cli',
        scope: 'svc:choose svc:discuss svc:member_join_request',
        from: 'Ann <script>',
        agent_slug: 'k7m3pq2dnx',
      },
      { origin: 'https://agent.example' },
    );
    expect(started.status).toBe(200);
    expect(started.headers.get('access-control-allow-origin')).toBe('*');
    expect(started.body).toMatchObject({
      device_code: expect.stringMatching(/^dc_/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${base}/oauth/device`,
      verification_uri_complete: `${base}/oauth/device?user_code=${started.body.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const userCode: string = started.body.user_code;

    // The operator opens the approval page: the request is shown, escaped, with no credential in it.
    const page = await call(base, 'GET', `/oauth/device?user_code=${userCode.toLowerCase()}`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self';/);
    expect(page.text).toContain('agent-cli');
    expect(page.text).toContain('Ann &#60;script&#62;');
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('svc:member_join_request');
    expect(page.text).not.toContain(ADMIN);

    const approve = (headers: Record<string, string>, body: unknown = { user_code: userCode, approve: true }) =>
      call(base, 'POST', '/oauth/device/approve', { body, headers });

    let extraPoll: string | undefined;
    const { token, seen } = await pollForToken(svc, clock, started.body, async (round) => {
      if (round === 1) {
        // An extra poll on time; the agent's own poll right after it is then too fast.
        const extra = await call(base, 'POST', '/oauth/token', {
          body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code },
        });
        extraPoll = extra.body.error;
      }
      if (round === 3) {
        const res = await approve({ authorization: `Bearer ${ADMIN}` });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ok: true, user_code: userCode, status: 'approved' });
      }
    });
    expect(extraPoll).toBe('authorization_pending');
    // After slow_down the agent waits 10 s instead of 5 s, and is in time again.
    expect(seen).toEqual(['authorization_pending', 'slow_down', 'authorization_pending']);
    expect(token).toMatchObject({
      access_token: expect.stringMatching(/^rk_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 2_592_000,
      scope: 'svc:choose svc:discuss svc:member_join_request',
      resource: null,
      public_id: expect.stringMatching(/^acct_[a-z2-7]{16}$/),
    });

    // The mandate verifies against the published JWKS with node:crypto alone.
    const jwks = (await call(base, 'GET', '/.well-known/jwks.json')).body;
    const checked = verifyWithJwks(token.mandate, jwks);
    expect(checked.ok).toBe(true);
    expect(checked.header).toEqual({ alg: 'EdDSA', kid: jwks.keys[0].kid, typ: 'svc-mandate+jwt' });
    expect(checked.payload).toMatchObject({
      iss: base,
      sub: `urn:svc:agent:${token.public_id}`,
      svc: { rooms: ['*'], actions: ['choose', 'discuss', 'member_join_request'], weight_cap: 9, trust_stage: 2 },
    });
    const deps = svc.service.identity.mandates;
    const ctx = {
      now: clock.now(),
      roomSlug: 'k7m3pq2dnx',
      roomUrl: `${base}/r/k7m3pq2dnx`,
      action: 'choose' as const,
    };
    await expect(verifyMandate(token.mandate, ctx, deps)).resolves.toMatchObject({ issuerKind: 'self' });
    expect(await svc.service.identity.deviceFlow.hostedKey(token.access_token)).toMatchObject({
      publicId: token.public_id,
    });

    // The device code is single use; the page no longer offers the request.
    const again = await call(base, 'POST', '/oauth/token', {
      body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code },
    });
    expect(again.body.error).toBe('invalid_grant');
    expect((await call(base, 'GET', `/oauth/device?user_code=${userCode}`)).text).toContain('No pending request');

    // Revocation by the key itself (form body), then discovery lists the jti.
    const revoked = await form(
      base,
      '/oauth/revoke',
      { token: token.access_token },
      { authorization: `Bearer ${token.access_token}` },
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    const discovery = (await call(base, 'GET', '/.well-known/svc.json')).body;
    expect(discovery.revocations).toEqual([
      { jti: checked.payload.jti, revoked_at: new Date(clock.now()).toISOString(), reason: 'key revoked' },
    ]);
    await expect(verifyMandate(token.mandate, ctx, deps)).rejects.toMatchObject({ code: 'mandate.revoked' });
    expect(await svc.service.identity.deviceFlow.hostedKey(token.access_token)).toBeNull();
    // RFC 7009: unknown tokens succeed too.
    const unknown = await call(base, 'POST', '/oauth/revoke', { body: { token: 'rk_nothing' }, token: ADMIN });
    expect(unknown.status).toBe(200);
  });

  it('redeems an account-bound invite only with the hosted key beside its own mandate', async () => {
    const { base } = svc;
    const started = await form(base, '/oauth/device_authorization', {
      client_id: 'agent-cli',
      scope: 'svc:member_join_request svc:choose',
    });
    const { token } = await pollForToken(svc, clock, started.body, async (round) => {
      if (round === 0) {
        const approved = await call(base, 'POST', '/oauth/device/approve', {
          body: { user_code: started.body.user_code, approve: true },
          headers: { authorization: `Bearer ${ADMIN}` },
        });
        expect(approved.status).toBe(200);
      }
    });
    const room = (
      await call(base, 'POST', '/api/rooms', { body: { about: 'accounts only', config: { visibility: 'private' } } })
    ).body;
    const invite = await call(base, 'POST', `/api/rooms/${room.slug}/invites`, {
      token: room.creator_token,
      body: { label: 'hosted agent', binding: { kind: 'account', value: token.public_id } },
    });
    expect(invite.body.invite.binding).toEqual({ kind: 'account', value: token.public_id });
    const mandateOnly = await call(base, 'POST', `/api/rooms/${room.slug}/join`, {
      body: { invite: invite.body.invite_token },
      headers: { 'x-mandate': token.mandate },
    });
    expect([mandateOnly.status, mandateOnly.body.error.code]).toEqual([400, 'invite.invalid']);
    const joined = await call(base, 'POST', `/api/rooms/${room.slug}/join`, {
      body: { invite: invite.body.invite_token },
      headers: { 'x-mandate': token.mandate, authorization: `Bearer ${token.access_token}` },
    });
    expect(joined.body).toMatchObject({
      display_name: 'hosted agent',
      participant_token: null,
      agent_did: `urn:svc:agent:${token.public_id}`,
    });
  });

  it('answers a denied request with access_denied', async () => {
    const started = await call(svc.base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
    const denied = await call(svc.base, 'POST', '/oauth/device/approve', {
      token: ADMIN,
      body: { user_code: started.body.user_code.replace('-', ''), approve: false },
    });
    expect(denied.body).toEqual({ ok: true, user_code: started.body.user_code, status: 'denied' });
    const res = await call(svc.base, 'POST', '/oauth/token', {
      body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('access_denied');
  });

  it('guards the approval endpoint with the admin token and answers envelopes', async () => {
    const { base } = svc;
    const started = await call(base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
    const body = { user_code: started.body.user_code, approve: true };
    const room = await call(base, 'POST', '/api/rooms', { body: { question: 'Which?', options: ['a', 'b'] } });

    const expectEnvelope = (res: Awaited<ReturnType<typeof call>>, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.request_id).toBe(res.headers.get('x-correlation-id'));
    };
    expectEnvelope(await call(base, 'POST', '/oauth/device/approve', { body }), 401, 'auth.required');
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', { body, token: 'not-the-admin-token' }),
      401,
      'auth.invalid_token',
    );
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', { body, token: room.body.creator_token }),
      403,
      'authority.denied',
    );
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', { body, headers: { 'x-mandate': 'a.b.c' } }),
      403,
      'authority.denied',
    );
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', {
        raw: '{"user_code":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'input.invalid',
    );
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', {
        body: { user_code: 'BCDF-GHJK', approve: true },
        token: ADMIN,
      }),
      400,
      'input.invalid',
    );
    expectEnvelope(
      await call(base, 'POST', '/oauth/device/approve', { body: { user_code: body.user_code }, token: ADMIN }),
      400,
      'input.invalid',
    );

    const preflight = await call(base, 'OPTIONS', '/oauth/device/approve', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const tokenPreflight = await call(base, 'OPTIONS', '/oauth/token', {
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    expect(tokenPreflight.status).toBe(204);
    expect(tokenPreflight.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers flat OAuth errors for malformed token and authorization requests', async () => {
    const { base } = svc;
    const flat = async (res: Promise<Awaited<ReturnType<typeof call>>>, status: number, error: string) => {
      const answer = await res;
      expect(answer.status).toBe(status);
      expect(answer.body).toEqual({ error, error_description: expect.any(String) });
      expect(answer.headers.get('cache-control')).toBe('no-store');
    };
    await flat(form(base, '/oauth/token', { grant_type: 'password', username: 'a' }), 400, 'unsupported_grant_type');
    await flat(
      form(base, '/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }),
      400,
      'invalid_request',
    );
    await flat(
      form(base, '/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'dc_x' }),
      400,
      'invalid_grant',
    );
    await flat(
      call(base, 'POST', '/oauth/token', { raw: '{"grant_type":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
    await flat(
      call(base, 'POST', '/oauth/token', { raw: 'grant_type', headers: { 'content-type': 'text/plain' } }),
      400,
      'invalid_request',
    );
    await flat(call(base, 'POST', '/oauth/token', { body: [1, 2] }), 400, 'invalid_request');
    await flat(form(base, '/oauth/device_authorization', {}), 400, 'invalid_request');
    await flat(
      call(base, 'POST', '/oauth/device_authorization', { raw: 'client_id=a&client_id=b', headers: FORM }),
      400,
      'invalid_request',
    );
    await flat(form(base, '/oauth/device_authorization', { client_id: 'a', scope: 'svc:vote' }), 400, 'invalid_scope');
    await flat(
      form(base, '/oauth/device_authorization', { client_id: 'a', resource: 'https://x.test' }),
      400,
      'invalid_target',
    );
    await flat(form(base, '/oauth/revoke', {}, { authorization: `Bearer ${ADMIN}` }), 400, 'invalid_request');
    const unauthenticated = await form(base, '/oauth/revoke', { token: 'rk_x' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body.error).toBe('invalid_client');
    expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer');

    await flat(call(base, 'POST', '/oauth/revoke?token=rk_x', { token: ADMIN, body: {} }), 400, 'invalid_request');
    const inUrl = await call(base, 'GET', '/oauth/device?access_token=x');
    expect(inUrl.status).toBe(400);
    expect(inUrl.body.error).toMatchObject({ code: 'input.invalid', details: { reason: 'credential_in_url' } });

    const wrongMethod = await call(base, 'GET', '/oauth/token');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error.details.allowed).toEqual(['POST']);
  });

  it('publishes the OAuth metadata documents', async () => {
    const { base } = svc;
    const resource = await call(base, 'GET', '/.well-known/oauth-protected-resource', {
      headers: { origin: 'https://a.example' },
    });
    expect(resource.status).toBe(200);
    expect(resource.headers.get('access-control-allow-origin')).toBe('*');
    expect(resource.headers.get('cache-control')).toBe('public, max-age=300');
    expect(resource.body).toEqual({
      resource: base,
      authorization_servers: [base],
      scopes_supported: expect.arrayContaining(['svc:choose', 'svc:member_join_request']),
      bearer_methods_supported: ['header'],
      resource_documentation: `${base}/v1/openapi.json`,
    });
    expect(resource.body.scopes_supported).toHaveLength(11);
    const server = await call(base, 'GET', '/.well-known/oauth-authorization-server');
    expect(server.body).toEqual({
      issuer: base,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code'],
      scopes_supported: resource.body.scopes_supported,
      token_endpoint_auth_methods_supported: ['none'],
      response_types_supported: [],
    });
  });
});

describe('without an admin token', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('says the device flow is unavailable and claims no authorization server', async () => {
    const { base } = svc;
    const started = await call(base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
    expect(started.status).toBe(503);
    expect(started.body.error).toBe('invalid_request');
    expect(started.body.error_description).toMatch(/admin token/);
    const metadata = await call(base, 'GET', '/.well-known/oauth-authorization-server');
    expect(metadata.status).toBe(404);
    const resource = await call(base, 'GET', '/.well-known/oauth-protected-resource');
    expect(resource.body.authorization_servers).toBeUndefined();
    expect((await call(base, 'GET', '/oauth/device')).text).toMatch(/unavailable/);
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(redis === null)('device flow with the Redis store, across two processes', () => {
  it('approves on one process, redeems and revokes on the other, and both list the revocation', async () => {
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `e2e-${randomUUID().slice(0, 8)}:`,
      CONCLAVE_ADMIN_TOKEN: ADMIN,
      CONCLAVE_SIGNING_KEY_SEED: '11'.repeat(32),
    };
    const clock = new ManualClock(Date.now());
    const one = await startService({ clock, env });
    const two = await startService({ clock, env });
    try {
      const started = await call(one.base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
      const approved = await call(two.base, 'POST', '/oauth/device/approve', {
        token: ADMIN,
        body: { user_code: started.body.user_code, approve: true },
      });
      expect(approved.status).toBe(200);
      const token = await call(one.base, 'POST', '/oauth/token', {
        body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code },
      });
      expect(token.status).toBe(200);
      await call(two.base, 'POST', '/oauth/revoke', { token: ADMIN, body: { token: token.body.access_token } });
      const jti = decodeSegment(token.body.mandate.split('.')[1]).jti;
      for (const svc of [one, two]) {
        const discovery = await call(svc.base, 'GET', '/.well-known/svc.json');
        expect(discovery.body.revocations.map((r: { jti: string }) => r.jti)).toEqual([jti]);
      }
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
