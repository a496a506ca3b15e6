/**
 * Nothing accepted may break a room: every value that can reach a receipt, an event or a view must be
 * one JCS can carry (05 §1.1). Lone surrogates, numbers that overflow to infinity and hostile nesting
 * are refused at the door with input.invalid, over REST and MCP alike; whatever is accepted seals,
 * signs and verifies.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyOutcomeSignatures, verifyRoomReceiptChain } from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectModern } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const LONE = '\\ud800';

function expectRefused(res: { status: number; body: any }, field: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('input.invalid');
  expect(res.body.error.details.field).toBe(field);
}

describe('values JCS cannot carry are refused at the door', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let slug: string;
  let token: string;
  let jwks: { keys: unknown[] };
  beforeAll(async () => {
    svc = await startService({ clock });
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Door?', options: ['alpha', 'beta'], config: { voting_window: 600 } },
    });
    slug = created.body.slug;
    token = created.body.creator_token;
    jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;
  });
  afterAll(async () => {
    await svc.stop();
  });

  const raw = (method: string, url: string, text: string, headers: Record<string, string> = {}) =>
    call(svc.base, method, url, { raw: text, headers: { 'content-type': 'application/json', ...headers }, token });

  it('refuses a lone surrogate in every field that reaches a receipt', async () => {
    expectRefused(
      await raw('POST', '/api/rooms', `{"question":"Where ${LONE}?","options":["alpha","beta"]}`),
      'question',
    );
    expectRefused(await raw('POST', '/api/rooms', `{"question":"Where?","options":["alpha","b${LONE}"]}`), 'options.1');
    expectRefused(await raw('POST', `/api/rooms/${slug}/discuss`, `{"body":"hi ${LONE}"}`), 'body');
    expectRefused(await raw('POST', `/api/rooms/${slug}/options`, `{"option":"gamma ${LONE}"}`), 'option');
    expectRefused(
      await raw('POST', `/api/rooms/${slug}/ask`, `{"question":"Next ${LONE}?","options":["x","y"]}`),
      'question',
    );
    expectRefused(await raw('POST', `/api/rooms/${slug}/close`, `{"statement":"Done ${LONE}"}`), 'statement');
    // In a key, and in a field the schema does not know: the fingerprint covers the whole body.
    expectRefused(await raw('POST', `/api/rooms/${slug}/discuss`, `{"body":"hi","x${LONE}":1}`), `x\ud800`);
  });

  it('refuses numbers that overflow to infinity, with or without an Idempotency-Key', async () => {
    for (const headers of [{}, { 'idempotency-key': 'k1' }] as Record<string, string>[]) {
      expectRefused(await raw('POST', `/api/rooms/${slug}/discuss`, '{"body":"hi","n":1e309}', headers), 'n');
      expectRefused(
        await raw('POST', `/api/rooms/${slug}/choose`, '{"choice":"alpha","weight":-1e400}', headers),
        'weight',
      );
    }
  });

  it('refuses hostile nesting before anything recurses over it', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const res = await raw('POST', `/api/rooms/${slug}/discuss`, `{"body":"hi","n":${deep}}`, {
      'idempotency-key': 'k2',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('input.invalid');
    expect(res.body.error.message).toContain('nests deeper');
  });

  it('refuses the same values in MCP tool arguments', async () => {
    const session = await connectModern(`${svc.base}/mcp`);
    try {
      const refused = await session.call('discuss', { slug, token, body: 'hi \ud800' });
      expect(refused.isError).toBe(true);
      expect(refused.body.error.code).toBe('input.invalid');
      expect(refused.body.error.details.field).toBe('body');
    } finally {
      await session.close();
    }
  });

  it('leaves the room fully working: it seals, signs and verifies', async () => {
    expect(
      (await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'alpha' } })).status,
    ).toBe(200);
    clock.advance(601_000);
    await svc.service.scheduler.runDue();
    const outcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token });
    expect(outcome.status).toBe(200);
    expect(outcome.body.decisions[0].receipt_jws).toEqual(expect.any(String));
    expect(verifyRoomReceiptChain(outcome.body)).toEqual({ ok: true, errors: [] });
    expect(verifyOutcomeSignatures(outcome.body, jwks)).toEqual({ ok: true, errors: [] });
  });

  it('keeps every room it accepts readable, sealable and verifiable, whatever the strings', async () => {
    // Any UTF-16 code units, lone surrogates and controls included, in every field that reaches a receipt.
    const codeUnits = fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
      minLength: 1,
      maxLength: 12,
    });
    await fc.assert(
      fc.asyncProperty(codeUnits, codeUnits, codeUnits, codeUnits, async (question, option, message, statement) => {
        const created = await call(svc.base, 'POST', '/api/rooms', {
          body: { question, options: ['keep', option], config: { voting_window: 60 } },
        });
        if (created.status !== 200) {
          expect(created.body.error.code).toBe('input.invalid');
          return;
        }
        const room = created.body.slug as string;
        const owner = created.body.creator_token as string;
        for (const [path, body] of [
          ['discuss', { body: message }],
          ['options', { option: message }],
          ['choose', { choice: 'keep' }],
        ] as const) {
          const res = await call(svc.base, 'POST', `/api/rooms/${room}/${path}`, { token: owner, body });
          if (res.status !== 200) expect(res.status, JSON.stringify(res.body)).toBe(400);
        }
        clock.advance(61_000);
        await svc.service.scheduler.runDue();
        const closed = await call(svc.base, 'POST', `/api/rooms/${room}/close`, { token: owner, body: { statement } });
        if (closed.status !== 200) expect(closed.body.error.code).toBe('input.invalid');
        for (const path of ['', '/decisions', '/events']) {
          expect((await call(svc.base, 'GET', `/api/rooms/${room}${path}`, { token: owner })).status).toBe(200);
        }
        const outcome = await call(svc.base, 'GET', `/api/rooms/${room}/outcome`, { token: owner });
        expect(outcome.status).toBe(200);
        expect(outcome.body.decisions.every((d: any) => typeof d.receipt_jws === 'string')).toBe(true);
        expect(verifyRoomReceiptChain(outcome.body)).toEqual({ ok: true, errors: [] });
        expect(verifyOutcomeSignatures(outcome.body, jwks)).toEqual({ ok: true, errors: [] });
      }),
      { numRuns: 25, seed: 14 },
    );
  });
});
