/**
 * The call shapes of the protocol's other TypeScript SDK, on a real room's receipts: object-form
 * `verifyCompactReceipt({ jws, publicKey, expectedHash })` answering `{ ok, header, payload,
 * receipt_hash }` without throwing, and `verifyAgreementReceiptSemantics` answering a `status`.
 * Today's positional forms keep working beside them.
 */
import { base64urlnopad } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ReceiptVerificationError,
  verifyAgreementReceiptSemantics,
  verifyCompactReceipt,
} from '../../src/client/index.js';
import { decodeCompact } from '../../src/receipts/compact.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

describe('client: the other SDK’s call shapes', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let agreementRow: any;
  let conclusion: any;
  let key: any;

  beforeAll(async () => {
    svc = await startService({ clock });
    const room = await seatedRoom(svc.base, { about: 'Ports', config: { type: 'persistent', voting_window: 60 } }, 2);
    const ask = await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: room.tokens[0],
      body: { question: 'Agree on x?', options: ['x', 'y'], agreement: true },
    });
    expect(ask.status).toBe(200);
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'x' } });
    }
    clock.advance(61_000);
    await svc.service.scheduler.runDue();
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/close`, { token: room.tokens[0], body: {} });
    const outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] })).body;
    agreementRow = outcome.decisions[0];
    conclusion = outcome.conclusion;
    const jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;
    key = jwks.keys.find((k: any) => k.kid === decodeCompact(agreementRow.receipt_jws).header.kid);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('verifies a receipt in object form with a JWK, a raw key or a WebCrypto key', async () => {
    const { receipt_jws: jws, receipt_hash: expectedHash } = agreementRow;
    const raw = base64urlnopad.decode(key.x);
    const webCrypto = await crypto.subtle.importKey('jwk', key, { name: 'Ed25519' }, false, ['verify']);
    for (const publicKey of [key, raw, webCrypto]) {
      const result = await verifyCompactReceipt({ jws, publicKey, expectedHash });
      expect(result).toMatchObject({ ok: true, receipt_hash: expectedHash, header: { typ: 'svc-receipt+jwt' } });
      expect(result.payload).toMatchObject({ svc: { decision_id: agreementRow.id } });
    }
  });

  it('answers ok: false in object form instead of throwing, naming the failure', async () => {
    const { receipt_jws: jws, receipt_hash: hash } = agreementRow;
    const wrongHash = await verifyCompactReceipt({ jws, publicKey: key, expectedHash: `sha256:${'3'.repeat(64)}` });
    expect(wrongHash).toMatchObject({ ok: false, failure: 'hash', receipt_hash: hash });
    const flipped = `${jws.slice(0, -2)}${jws.at(-2) === 'A' ? 'B' : 'A'}${jws.at(-1)}`;
    const forged = await verifyCompactReceipt({ jws: flipped, publicKey: key });
    expect(forged).toMatchObject({ ok: false, failure: 'signature', header: { typ: 'svc-receipt+jwt' } });
    const malformed = await verifyCompactReceipt({ jws: 'not.a.jws', publicKey: key });
    expect(malformed).toMatchObject({ ok: false, failure: 'malformed', header: null, payload: null });
    const shortKey = await verifyCompactReceipt({ jws, publicKey: new Uint8Array(31) });
    expect(shortKey).toMatchObject({ ok: false, failure: 'key' });
  });

  it('fails closed in object form without a key', async () => {
    const result = await verifyCompactReceipt({ jws: agreementRow.receipt_jws, publicKey: undefined });
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ failure: 'key', error: expect.stringContaining('signatures not checked') });
  });

  it('keeps the positional form: throws on failure, and now also answers ok and receipt_hash', async () => {
    const { receipt_jws: jws, receipt_hash: hash } = agreementRow;
    await expect(verifyCompactReceipt(jws, key, hash)).resolves.toMatchObject({ ok: true, receipt_hash: hash });
    await expect(verifyCompactReceipt(jws, key, `sha256:${'4'.repeat(64)}`)).rejects.toBeInstanceOf(
      ReceiptVerificationError,
    );
  });

  it('gives the agreement check a status beside its result, from a payload, { payload } or { jws }', () => {
    const payload = decodeCompact(agreementRow.receipt_jws).payload;
    for (const input of [payload, { payload }, { jws: agreementRow.receipt_jws }]) {
      const verdict = verifyAgreementReceiptSemantics(input);
      expect(verdict).toMatchObject({ result: 'valid', status: 'verified' });
      // What it reports of the decision comes from the signed payload.
      expect(verdict.signed?.winner).toBe((payload as any).svc.outcome.winning_option);
    }
    const lie: any = structuredClone(payload);
    lie.svc.outcome.winning_option = 'y';
    expect(verifyAgreementReceiptSemantics(lie)).toMatchObject({ result: 'invalid', status: 'failed' });
    const concluding = decodeCompact(conclusion.receipt_jws).payload;
    expect(verifyAgreementReceiptSemantics(concluding)).toMatchObject({ status: 'not_applicable' });
    const ordinary: any = structuredClone(payload);
    ordinary.svc.mechanism.parameters.agreement = false;
    expect(verifyAgreementReceiptSemantics(ordinary)).toMatchObject({
      result: 'unavailable',
      status: 'not_applicable',
    });
    const aggregateOnly: any = structuredClone(payload);
    aggregateOnly.svc.votes = [];
    expect(verifyAgreementReceiptSemantics(aggregateOnly).status).toMatch(/^(unavailable|failed)$/);
    expect(verifyAgreementReceiptSemantics({ jws: 'garbage' })).toMatchObject({ status: 'failed' });
  });
});
