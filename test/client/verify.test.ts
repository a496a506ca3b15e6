/**
 * The client library's offline verification against a real room's receipts: a genuine chain passes
 * on every count, and each kind of forgery fails on the receipt it concerns and for its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURES_NOT_CHECKED, verifyCompactReceipt, verifyRoomReceiptChain } from '../../src/client/verify.js';
import { decodeCompact } from '../../src/receipts/compact.js';
import { generateSigningKey, receiptHash, receiptHeader, signCompact } from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

describe('client: verifyRoomReceiptChain on a real room', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let outcome: any;
  let jwks: { keys: any[] };
  let roomUrl: string;

  beforeAll(async () => {
    svc = await startService({ clock });
    const room = await seatedRoom(
      svc.base,
      { question: 'First?', options: ['alpha', 'beta'], config: { voting_window: 60 } },
      3,
    );
    for (const [i, token] of room.tokens.entries()) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
        token,
        body: { choice: i === 2 ? 'beta' : 'alpha' },
      });
    }
    clock.advance(61_000);
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: room.tokens[0],
      body: {
        question: 'Second?',
        options: ['red', 'blue', 'green'],
        config: { mechanism: 'ranked_choice', voting_window: 60 },
      },
    });
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
        token,
        body: { ranking: ['blue', 'red', 'green'] },
      });
    }
    clock.advance(61_000);
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/close`, {
      token: room.tokens[0],
      body: { statement: 'Done.' },
    });
    outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] })).body;
    roomUrl = `${svc.base}/r/${room.slug}`;
    jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;
  });
  afterAll(async () => {
    await svc.stop();
  });

  const copy = () => structuredClone(outcome);

  it('proves every receipt of a genuine room: signature, hash, link and replay', async () => {
    const report = await verifyRoomReceiptChain(outcome, { jwks, room: roomUrl });
    expect(report.errors).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.receipts.map((r) => r.label)).toEqual(['decisions[0]', 'decisions[1]', 'conclusion']);
    expect(report.receipts.map((r) => r.sequence)).toEqual([1, 2, 3]);
    for (const receipt of report.receipts) {
      expect(receipt).toMatchObject({ signature: true, hash: true, link: true, ok: true });
    }
    expect(report.receipts.map((r) => r.replay)).toEqual([true, true, null]);
    expect(report.receipts[0]!.decision_id).toBe(outcome.decisions[0].id);
  });

  it('fails closed without a JWKS: never ok, saying the signatures were not checked', async () => {
    const report = await verifyRoomReceiptChain(outcome, { room: roomUrl });
    expect(report.ok).toBe(false);
    expect(report.signatures_checked).toBe(false);
    expect(report.errors).toEqual([SIGNATURES_NOT_CHECKED]);
    expect(report.errors[0]).toMatch(/^signatures not checked/);
    // Everything a key is not needed for still held, and is reported as such.
    expect(report.chain_ok).toBe(true);
    expect(report.receipts.every((r) => r.signature === null && r.hash && r.link)).toBe(true);
    const withKeys = await verifyRoomReceiptChain(outcome, { jwks, room: roomUrl });
    expect(withKeys).toMatchObject({ ok: true, signatures_checked: true, chain_ok: true });
  });

  it('reports a broken chain as not chain_ok, with or without keys', async () => {
    const broken = copy();
    broken.decisions[1].prev_hash = `sha256:${'0'.repeat(64)}`;
    expect(await verifyRoomReceiptChain(broken, { room: roomUrl })).toMatchObject({ ok: false, chain_ok: false });
    expect(await verifyRoomReceiptChain(broken, { jwks, room: roomUrl })).toMatchObject({ ok: false, chain_ok: false });
  });

  it('keeps chain_ok when only a signature fails', async () => {
    const report = await verifyRoomReceiptChain(outcome, { jwks: { keys: [] }, room: roomUrl });
    expect(report).toMatchObject({ ok: false, signatures_checked: true, chain_ok: true });
  });

  it('fails a tampered signature on that receipt', async () => {
    const tampered = copy();
    const jws: string = tampered.decisions[1].receipt_jws;
    const flipped = `${jws.slice(0, -2)}${jws.at(-2) === 'A' ? 'B' : 'A'}${jws.at(-1)}`;
    tampered.decisions[1].receipt_jws = flipped;
    tampered.decisions[1].receipt_hash = receiptHash(flipped);
    tampered.conclusion.prev_hash = receiptHash(flipped);
    const report = await verifyRoomReceiptChain(tampered, { jwks, room: roomUrl });
    expect(report.ok).toBe(false);
    expect(report.receipts[1]).toMatchObject({ signature: false, hash: true, ok: false });
    expect(report.errors.join('\n')).toMatch(/^decisions\[1\]: signature: /m);
  });

  it('fails a broken link and a wrong receipt_hash, naming the receipt', async () => {
    const broken = copy();
    broken.decisions[1].prev_hash = `sha256:${'0'.repeat(64)}`;
    const linkReport = await verifyRoomReceiptChain(broken, { jwks, room: roomUrl });
    expect(linkReport.receipts[1]).toMatchObject({ link: false, ok: false });
    expect(linkReport.errors.join('\n')).toMatch(/decisions\[1\]: prev_hash .* does not link/);

    const wrongHash = copy();
    wrongHash.decisions[0].receipt_hash = `sha256:${'1'.repeat(64)}`;
    const hashReport = await verifyRoomReceiptChain(wrongHash, { jwks, room: roomUrl });
    expect(hashReport.receipts[0]).toMatchObject({ hash: false, ok: false });
    expect(hashReport.errors.join('\n')).toMatch(/decisions\[0\]: receipt_jws does not hash/);
  });

  it('fails when the JWKS lacks the kid', async () => {
    const report = await verifyRoomReceiptChain(outcome, { jwks: { keys: [] }, room: roomUrl });
    expect(report.ok).toBe(false);
    expect(report.receipts.every((r) => r.signature === false)).toBe(true);
    expect(report.errors[0]).toMatch(/no key with kid/);
  });

  it('fails a validly signed receipt whose outcome does not replay from its ballots', async () => {
    const forger = generateSigningKey();
    const payload: any = decodeCompact(outcome.decisions[0].receipt_jws).payload;
    payload.svc.outcome.winning_option = 'beta';
    const forged = signCompact(receiptHeader(forger.kid), payload, forger);
    const lie = copy();
    lie.decisions = [{ ...lie.decisions[0], receipt_jws: forged, receipt_hash: receiptHash(forged) }];
    lie.conclusion = null;
    lie.status = 'open';
    const report = await verifyRoomReceiptChain(lie, { jwks: { keys: [forger.jwk] }, room: roomUrl });
    expect(report.receipts[0]).toMatchObject({ signature: true, hash: true, replay: false, ok: false });
    expect(report.errors.join('\n')).toMatch(/^decisions\[0\]: the outcome does not replay/m);
  });

  it('verifies one compact receipt against a JWK, with the expected hash', async () => {
    const row = outcome.decisions[0];
    const key = jwks.keys.find((k) => k.kid === decodeCompact(row.receipt_jws).header.kid);
    await expect(verifyCompactReceipt(row.receipt_jws, key, row.receipt_hash)).resolves.toMatchObject({
      header: { typ: 'svc-receipt+jwt' },
    });
    await expect(verifyCompactReceipt(row.receipt_jws, key, `sha256:${'2'.repeat(64)}`)).rejects.toThrow(/hashes to/);
  });
});
