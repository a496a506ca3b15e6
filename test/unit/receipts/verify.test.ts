import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildDecisionReceiptPayload,
  generateSigningKey,
  publicKeyFromJwks,
  receiptKid,
  signReceipt,
  verifyOutcomeSignatures,
  verifyRoomReceiptChain,
} from '../../../src/receipts/index.js';
import { concludedOutcome, decisionInput, openRow, roomKey } from './fixtures.js';
import { vectors } from './vectors.js';

const jwks = { keys: [generateSigningKey().jwk, roomKey.jwk] };

describe('receiptKid and publicKeyFromJwks', () => {
  it('reads the kid and finds its key in a JWKS or a discovery-like document', () => {
    const { decisions } = concludedOutcome();
    const kid = receiptKid(decisions[0]?.receipt_jws as string);
    expect(kid).toBe(vectors.keys.room.kid_rfc7638);
    const key = publicKeyFromJwks({ ...jwks, protocol_version: '0.1' } as { keys: unknown[] }, kid);
    expect(key.export({ format: 'jwk' }).x).toBe(vectors.keys.room.public_x);
  });

  it('refuses unknown kids and non-Ed25519 entries', () => {
    expect(() => publicKeyFromJwks(jwks, 'nope')).toThrow(/no key/);
    const rsa = { keys: [{ kty: 'RSA', kid: 'r', n: 'AQAB', e: 'AQAB' }] };
    expect(() => publicKeyFromJwks(rsa, 'r')).toThrow(/Ed25519/);
    const x25519 = { keys: [{ ...roomKey.jwk, crv: 'X25519' }] };
    expect(() => publicKeyFromJwks(x25519, roomKey.kid)).toThrow(/Ed25519/);
  });

  it('outside clients can verify with plain node:crypto from the JWKS x', () => {
    const jws = concludedOutcome().conclusion!.receipt_jws as string;
    const [h, p, s] = jws.split('.') as [string, string, string];
    const entry = jwks.keys.find((k) => k.kid === receiptKid(jws));
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: entry?.x as string }, format: 'jwk' });
    expect(verify(null, Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'))).toBe(true);
  });
});

describe('verifyRoomReceiptChain', () => {
  it('accepts a concluded room whose rows are in seal order', () => {
    expect(verifyRoomReceiptChain(concludedOutcome())).toEqual({ ok: true, errors: [] });
  });

  it('accepts open rows after the sealed ones, and an empty room', () => {
    const body = concludedOutcome();
    const open = { ...body, status: 'active', conclusion: null, decisions: [...body.decisions, openRow('d3', 3)] };
    expect(verifyRoomReceiptChain(open).ok).toBe(true);
    expect(verifyRoomReceiptChain({ status: 'active', decisions: [], conclusion: null }).ok).toBe(true);
  });

  it('rejects a broken link', () => {
    const body = concludedOutcome();
    const second = body.decisions[1];
    if (second) second.prev_hash = `sha256:${'a'.repeat(64)}`;
    const result = verifyRoomReceiptChain(body);
    expect(result.ok).toBe(false);
    expect(result.errors.join('\n')).toMatch(/decisions\[1\].*prev_hash/);
  });

  it('rejects a first row that does not start the chain', () => {
    const body = concludedOutcome();
    body.decisions = body.decisions.slice(1);
    expect(verifyRoomReceiptChain(body).ok).toBe(false);
  });

  it('rejects sealed rows listed out of seal order', () => {
    const body = concludedOutcome();
    body.decisions.reverse();
    expect(verifyRoomReceiptChain(body).ok).toBe(false);
  });

  it('rejects a sealed row after an unsealed row', () => {
    const body = concludedOutcome();
    body.status = 'active';
    body.conclusion = null;
    body.decisions.splice(1, 0, openRow('d3', 3));
    const result = verifyRoomReceiptChain(body);
    expect(result.ok).toBe(false);
    expect(result.errors.join('\n')).toMatch(/after an unsealed row/);
  });

  it('rejects a jws that does not hash to its receipt_hash', () => {
    const body = concludedOutcome();
    const [first, second] = body.decisions;
    if (first && second) first.receipt_jws = second.receipt_jws;
    const result = verifyRoomReceiptChain(body);
    expect(result.ok).toBe(false);
    expect(result.errors.join('\n')).toMatch(/decisions\[0\].*does not hash/);
  });

  it('rejects a conclusion jws/hash mismatch and a conclusion off the head', () => {
    const mismatched = concludedOutcome();
    if (mismatched.conclusion) mismatched.conclusion.receipt_jws = mismatched.decisions[0]?.receipt_jws;
    expect(verifyRoomReceiptChain(mismatched).errors.join('\n')).toMatch(/conclusion.*does not hash/);

    const offHead = concludedOutcome();
    if (offHead.conclusion) offHead.conclusion.prev_hash = offHead.decisions[0]?.receipt_hash;
    expect(verifyRoomReceiptChain(offHead).errors.join('\n')).toMatch(/conclusion.*prev_hash/);
  });

  it('rejects a resolved room whose last row is unsealed', () => {
    const body = concludedOutcome();
    body.status = 'resolved';
    body.conclusion = null;
    body.decisions.push(openRow('d3', 3));
    expect(verifyRoomReceiptChain(body).errors.join('\n')).toMatch(/resolved/);
  });

  it('rejects a sealed row without its jws and an unsealed row with one', () => {
    const missing = concludedOutcome();
    const first = missing.decisions[0];
    if (first) first.receipt_jws = null;
    expect(verifyRoomReceiptChain(missing).ok).toBe(false);

    const stray = concludedOutcome();
    stray.status = 'active';
    stray.conclusion = null;
    stray.decisions.push({ ...openRow('d3', 3), receipt_jws: stray.decisions[0]?.receipt_jws ?? null });
    expect(verifyRoomReceiptChain(stray).ok).toBe(false);
  });

  it('reports a body without decisions instead of throwing', () => {
    expect(verifyRoomReceiptChain(null).ok).toBe(false);
    expect(verifyRoomReceiptChain({ decisions: 'x' }).ok).toBe(false);
  });
});

describe('verifyOutcomeSignatures', () => {
  it('verifies every receipt, conclusion included, by kid', () => {
    expect(verifyOutcomeSignatures(concludedOutcome(), jwks)).toEqual({ ok: true, errors: [] });
  });

  it('reports receipts signed by a key missing from the JWKS', () => {
    const result = verifyOutcomeSignatures(concludedOutcome(generateSigningKey()), jwks);
    expect(result.ok).toBe(false);
    expect(result.errors).toHaveLength(3);
  });

  it('reports a forged receipt even when its listed hash was updated', () => {
    const body = concludedOutcome();
    const forger = generateSigningKey();
    const forged = signReceipt(buildDecisionReceiptPayload(decisionInput()), { ...forger, kid: roomKey.kid });
    const first = body.decisions[0];
    if (first) {
      first.receipt_jws = forged.jws;
      first.receipt_hash = forged.receipt_hash;
    }
    const result = verifyOutcomeSignatures(body, jwks);
    expect(result.ok).toBe(false);
    expect(result.errors.join('\n')).toMatch(/decisions\[0\].*signature/);
  });
});
