/**
 * Verification bound to the room it is asked about and to what the receipts sign (docs/receipts.md,
 * Verifying). Two real rooms on one service decide the same question opposite ways: Y keeps the
 * company, X sells it. Every forgery below keeps every signature genuine and only edits what the
 * outcome body shows unsigned, or relabels one room's receipts as the other's; each must fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ROOM_FROM_BODY,
  ROOM_NOT_CHECKED,
  SIGNATURES_NOT_CHECKED,
  verifyAgreementReceiptSemantics,
  verifyRoomReceiptChain,
} from '../../src/client/verify.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { DECIDED_QUESTION, type DecidedRoom, decidedRoom } from '../support/decided-room.js';
import { call, type RunningService, startService } from '../support/service.js';

const QUESTION = DECIDED_QUESTION;

describe('client: verification bound to the room and to what it signs', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let jwks: { keys: unknown[] };
  /** Room Y: decided "no", then "Which office?" → "north", closed with "We keep the company.". */
  let y: DecidedRoom;
  /** Room X: decided "yes", closed with "We sell the company.". */
  let x: DecidedRoom;

  beforeAll(async () => {
    svc = await startService({ clock });
    y = await decidedRoom(
      svc.base,
      clock,
      [
        ['no', 'no', 'yes'],
        ['north', 'north', 'south'],
      ],
      'We keep the company.',
    );
    x = await decidedRoom(svc.base, clock, [['yes', 'yes', 'no']], 'We sell the company.');
    jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;
  });
  afterAll(async () => {
    await svc.stop();
  });

  const copyY = () => structuredClone(y.outcome);
  const verifyY = (outcome: unknown) => verifyRoomReceiptChain(outcome, { jwks, room: y.url });
  /** The report failed, and one of its errors matches. */
  async function refused(outcome: unknown, why: RegExp) {
    const report = await verifyY(outcome);
    expect(report.ok).toBe(false);
    expect(report.chain_ok).toBe(false);
    expect(report.errors.join('\n')).toMatch(why);
    return report;
  }

  it('proves the genuine room and reports what its receipts sign', async () => {
    const report = await verifyY(y.outcome);
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ ok: true, chain_ok: true, room_checked: true, room_source: 'given', room: y.url });
    expect(report.decisions.map((d) => [d.label, d.question, d.status, d.winner])).toEqual([
      ['decisions[0]', QUESTION, 'completed', 'no'],
      ['decisions[1]', 'Which office?', 'completed', 'north'],
    ]);
    expect(report.decisions[0]).toMatchObject({
      decision_id: y.outcome.decisions[0].id,
      options: ['yes', 'no'],
      tallies: { yes: 1, no: 2 },
      cast_votes: 3,
      eligible_voters: 3,
    });
    expect(report.decisions[0]!.ballots.map((b) => b.choice).sort()).toEqual(['no', 'no', 'yes']);
    expect(report.conclusion).toMatchObject({ statement: 'We keep the company.' });
    expect(report.receipts.every((r) => r.room_match === true && r.fields_match)).toBe(true);
    // A trailing slash on the URL a reader typed names the same room.
    expect((await verifyRoomReceiptChain(y.outcome, { jwks, room: `${y.url}/` })).ok).toBe(true);
  });

  it('fails closed without a room, saying how to pass one', async () => {
    const report = await verifyRoomReceiptChain(y.outcome, { jwks });
    expect(report.ok).toBe(false);
    expect(report.room_checked).toBe(false);
    expect(report.errors).toEqual([ROOM_NOT_CHECKED]);
    expect(ROOM_NOT_CHECKED).toMatch(/room: "<room url>"/);
    // Everything else held, and the signed values are still reported.
    expect(report.chain_ok).toBe(true);
    expect(report.room).toBe(y.url);
    const neither = await verifyRoomReceiptChain(y.outcome);
    expect(neither.errors).toEqual([ROOM_NOT_CHECKED, SIGNATURES_NOT_CHECKED]);
    expect(neither.receipts.every((r) => r.room_match === null)).toBe(true);
    // Even without a room, every receipt must name the room the first one does.
    const mixed = copyY();
    mixed.conclusion = structuredClone(x.outcome.conclusion);
    const unbound = await verifyRoomReceiptChain(mixed, { jwks });
    expect(unbound.chain_ok).toBe(false);
    expect(unbound.receipts[2]!.room_match).toBe(false);
    expect(unbound.errors.join('\n')).toMatch(
      /^conclusion: the signed svc\.room_id .* is not the room of the first receipt/m,
    );
  });

  it('trusts the room the body names only when asked to, and says so', async () => {
    const report = await verifyRoomReceiptChain(y.outcome, { jwks, room: ROOM_FROM_BODY });
    expect(report).toMatchObject({ ok: true, room_source: 'from-body', room: y.url });
    const nameless = copyY();
    delete nameless.verification;
    const refusedNameless = await verifyRoomReceiptChain(nameless, { jwks, room: ROOM_FROM_BODY });
    expect(refusedNameless.ok).toBe(false);
    expect(refusedNameless.errors.join('\n')).toMatch(/the outcome names no room/);
  });

  it("refuses another room's receipts under this room's slug and question", async () => {
    const relabelled = structuredClone(x.outcome);
    relabelled.slug = y.slug;
    relabelled.question = QUESTION;
    relabelled.conclusion.closing_statement = 'We sell the company.';
    const report = await refused(relabelled, /the signed svc\.room_id .* is not the room being verified/);
    expect(report.errors.join('\n')).toMatch(/the signed iss/);
    expect(report.errors.join('\n')).toMatch(/the signed aud/);
    expect(report.receipts.every((r) => r.room_match === false)).toBe(true);
    // The genuine X outcome is refused as room Y too, slug and all.
    const asIs = await refused(x.outcome, /outcome\.slug .* is not the slug of the room being verified/);
    expect(asIs.room).toBe(x.url);
  });

  it("refuses receipts mixed from two rooms even when trusting the body's room", async () => {
    const mixed = copyY();
    // X's conclusion, relinked: its signed prev_hash is X's, so it also breaks the chain, but the room
    // is named as the reason wherever it differs.
    mixed.conclusion = structuredClone(x.outcome.conclusion);
    const report = await verifyRoomReceiptChain(mixed, { jwks, room: ROOM_FROM_BODY });
    expect(report.ok).toBe(false);
    expect(report.errors.join('\n')).toMatch(/conclusion: the signed svc\.room_id .* is not the room being verified/);
  });

  it('refuses an edited winner, naming the field and the signed value', async () => {
    const edited = copyY();
    edited.decisions[0].resolved_winner = 'yes';
    const report = await refused(
      edited,
      /^decisions\[0\]: resolved_winner "yes" differs from the signed winner "no"$/m,
    );
    expect(report.receipts[0]).toMatchObject({ fields_match: false, signature: true, hash: true, link: true });
    // What the report names as the winner is still the signed one.
    expect(report.decisions[0]!.winner).toBe('no');

    const summary = copyY();
    summary.resolved_winner = 'south';
    await refused(summary, /outcome\.resolved_winner "south" differs from the latest decision's signed winner "north"/);
  });

  it('refuses an edited status', async () => {
    const edited = copyY();
    edited.decisions[0].outcome_status = 'rejected';
    await refused(edited, /decisions\[0\]: outcome_status "rejected" differs from the signed status "completed"/);
    const engineWord = copyY();
    engineWord.decisions[1].resolved_outcome = 'no_pass';
    await refused(engineWord, /decisions\[1\]: resolved_outcome "no_pass" does not fit the signed status "completed"/);
    const rowStatus = copyY();
    rowStatus.decisions[0].status = 'voting';
    await refused(rowStatus, /decisions\[0\]: status "voting" is not "resolved"/);
  });

  it('refuses an edited option', async () => {
    const edited = copyY();
    edited.decisions[0].options = ['yes', 'no, never'];
    await refused(
      edited,
      /decisions\[0\]: options \["yes","no, never"\] differs from the signed options \["yes","no"\]/,
    );
  });

  it('refuses an edited question, on the row and in the summary', async () => {
    const edited = copyY();
    edited.decisions[0].question = 'Keep the company?';
    await refused(edited, /decisions\[0\]: question "Keep the company\?" differs from the signed question/);
    const summary = copyY();
    summary.question = 'Keep the company?';
    await refused(summary, /outcome\.question "Keep the company\?" differs from the latest decision's signed question/);
  });

  it('refuses an edited closing statement, and who closed and when', async () => {
    const edited = copyY();
    edited.conclusion.closing_statement = 'We sell the company.';
    const report = await refused(
      edited,
      /^conclusion: closing_statement "We sell the company\." differs from the signed statement "We keep the company\."$/m,
    );
    expect(report.conclusion?.statement).toBe('We keep the company.');
    const by = copyY();
    by.conclusion.concluded_by = 'operator';
    await refused(by, /conclusion: concluded_by "operator" differs from the signed/);
    const at = copyY();
    at.conclusion.concluded_at = '2001-01-01T00:00:00.000Z';
    await refused(at, /conclusion: concluded_at "2001-01-01T00:00:00.000Z" differs from the signed instant/);
  });

  it('refuses a changed prev_hash on every receipt, the conclusion included', async () => {
    const other = `sha256:${'0'.repeat(64)}`;
    for (const at of ['decisions[0]', 'decisions[1]', 'conclusion'] as const) {
      const edited = copyY();
      const entry = at === 'conclusion' ? edited.conclusion : edited.decisions[Number(at[10])];
      entry.prev_hash = other;
      const report = await refused(
        edited,
        new RegExp(`^${at.replace(/[[\]]/g, '\\$&')}: prev_hash .* does not link`, 'm'),
      );
      expect(report.errors.join('\n')).toMatch(/the signed prev_hash differs/);
    }
    // Dropping a receipt and relinking what follows it to the one before breaks the signed link.
    const dropped = copyY();
    dropped.decisions.splice(1, 1);
    dropped.conclusion.prev_hash = dropped.decisions[0].receipt_hash;
    await refused(dropped, /conclusion: the signed prev_hash differs/);
  });

  it('refuses two rows showing each other’s receipt', async () => {
    // The receipts stay in chain order (every link holds); only which decision each row shows moves.
    const swapped = copyY();
    const [first, second] = swapped.decisions;
    for (const field of ['receipt_jws', 'receipt_hash', 'prev_hash']) {
      [first[field], second[field]] = [second[field], first[field]];
    }
    swapped.decisions = [second, first];
    const report = await refused(swapped, /decisions\[0\]: id .* differs from the signed decision_id/);
    expect(report.errors.join('\n')).toMatch(
      /decisions\[0\]: question "Which office\?" differs from the signed question/,
    );
    expect(report.errors.join('\n')).toMatch(
      /decisions\[1\]: resolved_winner "no" differs from the signed winner "north"/,
    );
  });

  it('refuses a JWS moved to another row, links and all', async () => {
    const moved = copyY();
    const [first, second] = moved.decisions;
    for (const field of ['receipt_jws', 'receipt_hash', 'prev_hash']) {
      [first[field], second[field]] = [second[field], first[field]];
    }
    const report = await refused(moved, /decisions\[0\]: the signed sequence 2 is not its place in the chain, 1/);
    expect(report.errors.join('\n')).toMatch(/decisions\[0\]: id .* differs from the signed decision_id/);
  });

  it('refuses rows reordered', async () => {
    const reordered = copyY();
    reordered.decisions.reverse();
    const report = await refused(reordered, /decisions\[0\]: the signed sequence 2 is not its place in the chain, 1/);
    expect(report.errors.join('\n')).toMatch(/decisions\[1\]: the signed sequence 1 is not its place in the chain, 2/);
  });

  it('the agreement helper reports only what the receipt signs', async () => {
    const row = copyY().decisions[0];
    row.resolved_winner = 'yes';
    const verdict = verifyAgreementReceiptSemantics({ jws: row.receipt_jws });
    expect(verdict.status).toBe('not_applicable');
    expect(verdict.signed).toMatchObject({
      question: QUESTION,
      winner: 'no',
      status: 'completed',
      options: ['yes', 'no'],
    });
    // An outcome row is read through its receipt: its unsigned winner is never reported.
    expect(verifyAgreementReceiptSemantics(row as never).signed?.winner).toBe('no');
  });
});
