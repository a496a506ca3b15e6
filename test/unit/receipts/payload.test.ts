import { describe, expect, it } from 'vitest';
import {
  buildConclusionReceiptPayload,
  buildDecisionReceiptPayload,
  canonicalJson,
  decodeCompact,
  receiptHash,
  signReceipt,
  verifyCompactReceipt,
} from '../../../src/receipts/index.js';
import { conclusionInput, decisionInput, ROOM_URL, roomKey } from './fixtures.js';
import { vectors } from './vectors.js';

// The claim sets of 05 §2.1 and §3, written out so that any added or dropped claim fails here.
const TOP_LEVEL = ['aud', 'iat', 'iss', 'jti', 'svc'];
const DECISION_SVC = [
  'abstentions',
  'decision_id',
  'decision_kind',
  'deliberation_message_count',
  'mechanism',
  'outcome',
  'overrides',
  'prev_hash',
  'room_id',
  'sequence',
  'votes',
  'windows',
];
const CONCLUSION_SVC = [...DECISION_SVC, 'closing_statement', 'concluded_by'].sort();

const keysOf = (o: object) => Object.keys(o).sort();

describe('buildDecisionReceiptPayload', () => {
  const payload = buildDecisionReceiptPayload(decisionInput());

  it('emits exactly the 05 §2.1 claims', () => {
    expect(keysOf(payload)).toEqual(TOP_LEVEL);
    expect(keysOf(payload.svc)).toEqual(DECISION_SVC);
    expect(keysOf(payload.svc.mechanism)).toEqual(['kind', 'parameters']);
    expect(keysOf(payload.svc.windows)).toEqual([
      'cooldown_ended_at',
      'deliberation_started_at',
      'voting_ended_at',
      'voting_started_at',
    ]);
    expect(keysOf(payload.svc.outcome)).toEqual(['diagnostics', 'status', 'tallies', 'winning_option']);
    expect(keysOf(payload.svc.outcome.diagnostics)).toEqual(['cast_votes', 'eligible_voters']);
    for (const vote of payload.svc.votes) {
      expect(keysOf(vote)).toEqual(['agent_id', 'cast_at', 'choice', 'mandate_ref', 'signature', 'weight']);
    }
    for (const abstention of payload.svc.abstentions) {
      expect(keysOf(abstention)).toEqual(['agent_id', 'declared_at', 'reason']);
    }
  });

  it('fills iss, aud, room_id with the room URL, floors iat, and keeps overrides empty', () => {
    expect(payload.iss).toBe(ROOM_URL);
    expect(payload.aud).toBe(ROOM_URL);
    expect(payload.svc.room_id).toBe(ROOM_URL);
    expect(payload.iat).toBe(Math.floor(Date.parse('2026-05-01T11:00:00.999Z') / 1000));
    expect(payload.svc.overrides).toEqual([]);
    expect(payload.svc.prev_hash).toBeNull();
  });

  it('drops extra properties riding on the inputs', () => {
    const input = decisionInput();
    const extra = { leaked: 'token' };
    const dirty = {
      ...input,
      extra: 1,
      windows: { ...input.windows, ...extra },
      mechanism: { ...input.mechanism, ...extra },
      votes: input.votes.map((v) => ({ ...v, ...extra })),
      abstentions: input.abstentions.map((a) => ({ ...a, ...extra })),
      outcome: { ...input.outcome, ...extra, diagnostics: { ...input.outcome.diagnostics, ...extra } },
    };
    expect(canonicalJson(buildDecisionReceiptPayload(dirty))).toBe(canonicalJson(payload));
  });

  it('serialises in the JCS order shown in 05 §2.6', () => {
    const text = canonicalJson(payload);
    expect(text.startsWith('{"aud":')).toBe(true);
    expect(text).toContain('"svc":{"abstentions":[{"agent_id":"participant:4e1d","declared_at":');
  });

  it('refuses an inconsistent chain position', () => {
    const hash = vectors.chain[0]?.receipt_hash as string;
    expect(() => buildDecisionReceiptPayload(decisionInput({ sequence: 2, prevHash: null }))).toThrow(/prev_hash/);
    expect(() => buildDecisionReceiptPayload(decisionInput({ sequence: 1, prevHash: hash }))).toThrow(/prev_hash/);
    expect(() => buildDecisionReceiptPayload(decisionInput({ sequence: 2, prevHash: 'abc' }))).toThrow(/prev_hash/);
    expect(() => buildDecisionReceiptPayload(decisionInput({ sequence: 0 }))).toThrow(/sequence/);
    expect(() => buildDecisionReceiptPayload(decisionInput({ sealInstantMs: Number.NaN }))).toThrow(/instant/);
    expect(buildDecisionReceiptPayload(decisionInput({ sequence: 2, prevHash: hash })).svc.prev_hash).toBe(hash);
  });
});

describe('buildConclusionReceiptPayload', () => {
  const payload = buildConclusionReceiptPayload(conclusionInput());

  it('emits exactly the 05 §3 claims with the fixed values', () => {
    expect(keysOf(payload)).toEqual(TOP_LEVEL);
    expect(keysOf(payload.svc)).toEqual(CONCLUSION_SVC);
    expect(payload.svc).toMatchObject({
      decision_kind: 'conclusion',
      decision_id: null,
      mechanism: null,
      windows: null,
      votes: [],
      abstentions: [],
      overrides: [],
      outcome: {
        status: 'completed',
        winning_option: null,
        tallies: {},
        diagnostics: { cast_votes: 0, eligible_voters: 0 },
      },
      closing_statement: 'Done.',
      concluded_by: 'operator',
      deliberation_message_count: 7,
    });
    expect(payload.iat).toBe(Date.parse('2026-05-01T12:00:00.000Z') / 1000);
  });

  it('allows a null closing statement', () => {
    expect(buildConclusionReceiptPayload(conclusionInput({ closingStatement: null })).svc.closing_statement).toBeNull();
  });
});

describe('signReceipt', () => {
  it('signs with the RFC 7638 kid and returns the hash of the exact JWS', () => {
    const payload = buildDecisionReceiptPayload(decisionInput());
    const { jws, receipt_hash } = signReceipt(payload, roomKey);
    expect(receipt_hash).toBe(receiptHash(jws));
    const { header, payload: decoded } = verifyCompactReceipt(jws, roomKey.jwk, receipt_hash);
    expect(header).toEqual({ alg: 'EdDSA', kid: vectors.keys.room.kid_rfc7638, typ: 'svc-receipt+jwt' });
    expect(decoded).toEqual(payload);
  });

  it('signs the JCS bytes of the payload', () => {
    const payload = buildConclusionReceiptPayload(conclusionInput());
    const { jws } = signReceipt(payload, roomKey);
    const text = Buffer.from(decodeCompact(jws).signingInput.split('.')[1] as string, 'base64url').toString('utf8');
    expect(text).toBe(canonicalJson(payload));
  });
});
