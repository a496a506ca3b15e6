/**
 * Every error is the protocol envelope with the right code and status, and no malformed input —
 * bad JSON, wrong types, huge bodies, unknown keys, hostile strings — produces a 500 or a crash.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

function expectEnvelope(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toBe(res.headers.get('x-correlation-id'));
}

describe('error envelope and hostile input', () => {
  let svc: RunningService;
  let slug: string;
  let token: string;
  beforeAll(async () => {
    svc = await startService();
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Pick one?', options: ['a', 'b'] },
    });
    slug = created.body.slug;
    token = created.body.creator_token;
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('answers unknown routes, unknown rooms and wrong methods with envelopes', async () => {
    const { base } = svc;
    expectEnvelope(await call(base, 'GET', '/nope'), 404, 'vendor:conclave:not_found');
    expectEnvelope(await call(base, 'POST', `/api/rooms/${slug}/vote`, { body: {} }), 404, 'vendor:conclave:not_found');
    for (const path of ['', '/join', '/decisions', '/outcome', '/choose', '/close']) {
      const method = path === '' || path === '/decisions' || path === '/outcome' ? 'GET' : 'POST';
      const res = await call(base, method, `/api/rooms/zzzzzzzzzz${path}`, {
        body: method === 'POST' ? {} : undefined,
      });
      expectEnvelope(res, 404, 'room.not_found');
      expect(res.body.error.details).toEqual({ slug: 'zzzzzzzzzz' });
    }
    const wrong = await call(base, 'PUT', `/api/rooms/${slug}/choose`, { body: {} });
    expectEnvelope(wrong, 405, 'vendor:conclave:method_not_allowed');
    expect(wrong.body.error.details.allowed).toEqual(expect.arrayContaining(['GET', 'POST']));
  });

  it('echoes X-Correlation-Id as request_id', async () => {
    const res = await call(svc.base, 'GET', '/api/rooms/zzzzzzzzzz', { headers: { 'x-correlation-id': 'corr-123' } });
    expect(res.headers.get('x-correlation-id')).toBe('corr-123');
    expect(res.body.error.request_id).toBe('corr-123');
  });

  it('refuses malformed bodies with 400/413 envelopes', async () => {
    const { base } = svc;
    expectEnvelope(
      await call(base, 'POST', '/api/rooms', { raw: '{"question": ', headers: { 'content-type': 'application/json' } }),
      400,
      'input.invalid',
    );
    expectEnvelope(
      await call(base, 'POST', '/api/rooms', { raw: '[1,2]', headers: { 'content-type': 'application/json' } }),
      400,
      'input.invalid',
    );
    expectEnvelope(
      await call(base, 'POST', '/api/rooms', { raw: '"text"', headers: { 'content-type': 'application/json' } }),
      400,
      'input.invalid',
    );
    expectEnvelope(
      await call(base, 'POST', '/api/rooms', {
        raw: 'question=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'input.invalid',
    );
    const huge = await call(base, 'POST', '/api/rooms', {
      raw: JSON.stringify({ about: 'x'.repeat(5 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(huge, 413, 'input.invalid');
    const wrongType = await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body: 42 } });
    expectEnvelope(wrongType, 400, 'input.invalid');
    expect(wrongType.body.error.details.field).toBe('body');
  });

  it('validates room config strictly', async () => {
    const { base } = svc;
    const unknown = await call(base, 'POST', '/api/rooms', { body: { about: 'x', config: { threshold: 0.5 } } });
    expectEnvelope(unknown, 400, 'input.invalid');
    expect(unknown.body.error.details.reason).toBe('unknown_keys');
    expect(unknown.body.error.details.allowed_keys).toContain('max_open_decisions');
    const duration = await call(base, 'POST', '/api/rooms', { body: { about: 'x', config: { voting_window: '1h' } } });
    expect(duration.body.error.details.reason).toBe('wrong_type');
    const range = await call(base, 'POST', '/api/rooms', { body: { about: 'x', config: { max_open_decisions: 6 } } });
    expect(range.body.error.details.reason).toBe('out_of_range');
    const reserved = await call(base, 'POST', '/api/rooms', {
      body: { about: 'x', config: { mechanism: 'conviction_vote' } },
    });
    expect(reserved.body.error.details.reason).toBe('reserved_mechanism');
    const unknownMech = await call(base, 'POST', '/api/rooms', {
      body: { about: 'x', config: { mechanism: 'coin_flip' } },
    });
    expect(unknownMech.body.error.details.reason).toBe('unknown_mechanism');
    const removed = await call(base, 'POST', '/api/rooms', {
      body: { about: 'x', config: { visibility: 'password' } },
    });
    expectEnvelope(removed, 400, 'input.invalid');
    const recurrence = await call(base, 'POST', '/api/rooms', {
      body: { about: 'x', config: { recurrence: 'weekly' } },
    });
    expect(recurrence.body.error.message).toMatch(/not supported/);
    const pwPublic = await call(base, 'POST', '/api/rooms', {
      body: { about: 'x', password: 'long enough password', config: { visibility: 'public' } },
    });
    expectEnvelope(pwPublic, 400, 'input.invalid');
    const nothing = await call(base, 'POST', '/api/rooms', { body: {} });
    expectEnvelope(nothing, 400, 'input.invalid');
  });

  it('refuses credentials in URLs and accepts JSON content type on empty GETs', async () => {
    const { base } = svc;
    const inUrl = await call(base, 'GET', `/api/rooms/${slug}?token=${token}`);
    expectEnvelope(inUrl, 400, 'input.invalid');
    expect(inUrl.body.error.details.reason).toBe('credential_in_url');
    expect(inUrl.text).not.toContain(token);
    const emptyGet = await call(base, 'GET', `/api/rooms/${slug}`, {
      token,
      headers: { 'content-type': 'application/json' },
    });
    expect(emptyGet.status).toBe(200);
    const emptyPost = await call(base, 'POST', `/api/rooms/${slug}/join`, {
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(emptyPost.status).toBe(200);
  });

  it('requires credentials for acts', async () => {
    const res = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { body: { choice: 'a' } });
    expectEnvelope(res, 401, 'auth.required');
    const badKey = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token,
      body: { body: 'x' },
      headers: { 'idempotency-key': ' bad key ' },
    });
    expectEnvelope(badKey, 400, 'input.invalid');
  });

  it('never answers 5xx to arbitrary JSON on any write route', async () => {
    const routes = [
      '/api/rooms',
      `/api/rooms/${slug}/join`,
      `/api/rooms/${slug}/ask`,
      `/api/rooms/${slug}/discuss`,
      `/api/rooms/${slug}/options`,
      `/api/rooms/${slug}/choose`,
      `/api/rooms/${slug}/abstain`,
      `/api/rooms/${slug}/start-choosing`,
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.jsonValue({ maxDepth: 3 }), async (route, value) => {
        const res = await call(svc.base, 'POST', route, {
          token,
          raw: JSON.stringify(value),
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body.error.code).toBe('string');
      }),
      { numRuns: 150 },
    );
  });

  it('serves an OpenAPI 3.1 document that validates', async () => {
    const res = await call(svc.base, 'GET', '/v1/openapi.json');
    expect(res.body.openapi).toBe('3.1.0');
    const validated = await SwaggerParser.validate(structuredClone(res.body));
    expect(Object.keys(validated.paths ?? {})).toEqual(
      expect.arrayContaining([
        '/api/rooms',
        '/api/rooms/{slug}/choose',
        '/.well-known/svc.json',
        '/oauth/token',
        '/api/rooms/{slug}/events/stream',
        '/api/rooms/{slug}/next-action',
        '/api/rooms/{slug}/webhooks',
      ]),
    );
    const refused = res.body.paths['/api/rooms/{slug}/choose'].post.responses['400'].content['application/json'].schema;
    expect(refused.allOf[0].$ref).toBe('#/components/schemas/ErrorEnvelope');
    expect(refused.allOf[1].properties.error.properties.code.enum).toEqual(
      expect.arrayContaining(['input.invalid', 'decision.not_open', 'choice.invalid_option']),
    );
  });

  it('serves honest discovery and JWKS documents', async () => {
    const discovery = await call(svc.base, 'GET', '/.well-known/svc.json');
    expect(discovery.body.protocol_version).toBe('0.1');
    expect(discovery.body.mechanisms_supported).toEqual([
      'simple_majority',
      'supermajority',
      'plurality',
      'approval',
      'ranked_choice',
      'ranked_pairwise',
      'score_vote',
      'quadratic_vote',
    ]);
    expect(discovery.body.keys[0].kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(discovery.headers.get('access-control-allow-origin')).toBe('*');
    const jwks = await call(svc.base, 'GET', '/.well-known/jwks.json');
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const preflight = await fetch(`${svc.base}/api/rooms`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-max-age')).toBe('600');
  });
});
