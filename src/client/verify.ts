/**
 * Offline verification of a room's receipts (docs/receipts.md), for Node ≥ 20 and browsers alike: WebCrypto
 * Ed25519 for signatures, and for everything else the same pure modules the server's own checks use
 * (strict compact-JWS parsing, receipt hashing, the chain walk, the mechanisms' replay). Nothing here
 * touches the network: give it an `/outcome` body and a JWKS you fetched or were handed.
 */
import {
  type AgreementReport,
  verifyAgreementReceiptSemantics as checkAgreement,
  replayReceipt,
} from '../mechanisms/replay.js';
import {
  type BallotAttribution,
  ballotAttributions,
  verifyRoomReceiptChain as checkChainOrder,
  ed25519JwkFor,
  isRecord,
  outcomeReceipts,
  receiptKid,
} from '../receipts/chain.js';
import {
  conclusionErrors,
  type SignedBallot,
  decisionRowErrors,
  normalizeRoomUrl,
  outcomeRoomUrl,
  ROOM_FROM_BODY,
  roomErrors,
  type SignedConclusion,
  type SignedDecision,
  signedConclusion,
  signedDecision,
  summaryErrors,
} from '../receipts/binding.js';
import { checkJwsHeader, decodeCompact, type JoseHeader, type JwsPayload, RECEIPT_TYP } from '../receipts/compact.js';
import { receiptHash } from '../receipts/hash.js';

export { ballotAttributions, receiptKid, replayReceipt };
export type { AgreementReport, BallotAttribution, SignedBallot, SignedConclusion, SignedDecision };
export { outcomeRoomUrl, ROOM_FROM_BODY };
export type { ReplayReport } from '../mechanisms/replay.js';

export interface Jwks {
  keys: unknown[];
}

/** WebCrypto's key and JWK types, as the runtime's global `crypto` declares them (Node or DOM). */
export type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
export type PublicJwk = { kty: string; crv?: string; x?: string; [member: string]: unknown };

/** Why one receipt did not verify; `receipt` names it as the outcome body does (`decisions[2]`, `conclusion`). */
export class ReceiptVerificationError extends Error {
  constructor(
    readonly failure: 'malformed' | 'key' | 'signature' | 'hash',
    message: string,
  ) {
    super(message);
    this.name = 'ReceiptVerificationError';
  }
}

/** The Ed25519 key with this `kid` in a JWKS (or the discovery document), imported for WebCrypto. */
export async function publicKeyFromJwks(jwks: Jwks, kid: string): Promise<WebCryptoKey> {
  let jwk: ReturnType<typeof ed25519JwkFor>;
  try {
    jwk = ed25519JwkFor(jwks, kid);
  } catch (error) {
    throw new ReceiptVerificationError('key', (error as Error).message);
  }
  return crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, [
    'verify',
  ]);
}

/** A verified receipt: the decoded header and payload, and the hash of the exact JWS bytes. */
export interface VerifiedCompactReceipt {
  ok: true;
  header: JoseHeader;
  payload: JwsPayload;
  receipt_hash: string;
}

/** The object-form answer: never thrown, `ok: false` with the failure and its reason. */
export type CompactReceiptResult =
  | VerifiedCompactReceipt
  | {
      ok: false;
      failure: ReceiptVerificationError['failure'];
      error: string;
      /** Decoded when the JWS parses, even though it did not verify. */
      header: JoseHeader | null;
      payload: JwsPayload | null;
      /** The hash of the given JWS (null when none was given). */
      receipt_hash: string | null;
    };

/** The object form of `verifyCompactReceipt`, as the protocol's other TypeScript SDK calls it. */
export interface CompactReceiptInput {
  jws: string;
  /** An Ed25519 public key: a WebCrypto key, a JWK, or the raw 32 bytes. Without one, nothing is proven. */
  publicKey: WebCryptoKey | PublicJwk | Uint8Array | null | undefined;
  /** The `receipt_hash` the receipt must hash to (`sha256:<hex>`). */
  expectedHash?: string | undefined;
}

/**
 * One compact receipt against one Ed25519 key: the strict parse (docs/receipts.md, By hand), alg/typ/kid, the
 * signature, and the receipt hash when `expectedHash` is given. Two call shapes:
 * `verifyCompactReceipt(jws, key, expectedHash?)` throws a ReceiptVerificationError on any failure;
 * `verifyCompactReceipt({ jws, publicKey, expectedHash })` resolves to `{ ok: false, … }` instead.
 */
export function verifyCompactReceipt(input: CompactReceiptInput): Promise<CompactReceiptResult>;
export function verifyCompactReceipt(
  jws: string,
  key: WebCryptoKey | PublicJwk | Uint8Array,
  expectedHash?: string,
): Promise<VerifiedCompactReceipt>;
export async function verifyCompactReceipt(
  first: string | CompactReceiptInput,
  key?: WebCryptoKey | PublicJwk | Uint8Array,
  expectedHash?: string,
): Promise<CompactReceiptResult> {
  if (typeof first === 'string') return checkCompactReceipt(first, key, expectedHash);
  try {
    return await checkCompactReceipt(first.jws, first.publicKey, first.expectedHash);
  } catch (error) {
    if (!(error instanceof ReceiptVerificationError)) throw error;
    const decoded = decodedOrNull(first.jws);
    return {
      ok: false,
      failure: error.failure,
      error: error.message,
      header: decoded?.header ?? null,
      payload: decoded?.payload ?? null,
      receipt_hash: typeof first.jws === 'string' ? receiptHash(first.jws) : null,
    };
  }
}

async function checkCompactReceipt(
  jws: unknown,
  key: WebCryptoKey | PublicJwk | Uint8Array | null | undefined,
  expectedHash: string | undefined,
): Promise<VerifiedCompactReceipt> {
  let decoded: ReturnType<typeof decodeCompact>;
  let kid: string;
  try {
    if (typeof jws !== 'string') throw new Error('the receipt is not a compact JWS string');
    decoded = decodeCompact(jws);
    kid = checkJwsHeader(decoded.header, RECEIPT_TYP);
  } catch (error) {
    throw new ReceiptVerificationError('malformed', (error as Error).message);
  }
  // Fail closed: no key means the signature was not checked, which is not a verified receipt.
  if (!key) throw new ReceiptVerificationError('key', 'no public key given: signatures not checked');
  const valid =
    decoded.signature.length === 64 &&
    (await crypto.subtle.verify(
      { name: 'Ed25519' },
      await importEd25519(key),
      decoded.signature as Uint8Array<ArrayBuffer>,
      new TextEncoder().encode(decoded.signingInput),
    ));
  if (!valid) {
    throw new ReceiptVerificationError('signature', `the signature does not verify with the key for kid ${kid}`);
  }
  const actual = receiptHash(jws as string);
  if (expectedHash !== undefined && actual !== expectedHash) {
    throw new ReceiptVerificationError('hash', `receipt_jws hashes to ${actual}, not ${expectedHash}`);
  }
  return { ok: true, header: decoded.header, payload: decoded.payload, receipt_hash: actual };
}

async function importEd25519(key: WebCryptoKey | PublicJwk | Uint8Array): Promise<WebCryptoKey> {
  try {
    if (key instanceof Uint8Array) {
      if (key.length !== 32) throw new Error(`a raw Ed25519 public key is 32 bytes, not ${key.length}`);
      return await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, [
        'verify',
      ]);
    }
    if ('kty' in key) return await crypto.subtle.importKey('jwk', key, { name: 'Ed25519' }, false, ['verify']);
    return key;
  } catch (error) {
    throw new ReceiptVerificationError(
      'key',
      `the public key is not a usable Ed25519 key: ${(error as Error).message}`,
    );
  }
}

function decodedOrNull(jws: unknown): ReturnType<typeof decodeCompact> | null {
  try {
    return typeof jws === 'string' ? decodeCompact(jws) : null;
  } catch {
    return null;
  }
}

/** The other SDK's verdict words for an agreement check. */
export type AgreementStatus = 'verified' | 'not_applicable' | 'unavailable' | 'failed';

/** Today's `result` (valid, invalid, unavailable) and the other SDK's `status`, side by side. */
export interface AgreementVerdict extends AgreementReport {
  status: AgreementStatus;
  /**
   * The decision as the receipt signs it (question, options, status, winner, tallies, ballots): report
   * these, never an outcome row's unsigned copies. Null when there is no receipt payload to read.
   * The signature is `verifyCompactReceipt`'s (or `verifyRoomReceiptChain`'s) job.
   */
  signed: SignedDecision | null;
}

/**
 * Replays an agreement decision's signed ballots and refuses an inconsistent unanimity outcome
 * (docs/receipts.md, Verifying). Takes a receipt payload, `{ payload }`, `{ jws }` (the compact receipt,
 * decoded here; its signature is `verifyCompactReceipt`'s job) or an outcome row (`{ receipt_jws, … }`,
 * read through its receipt only). A receipt that is not an agreement decision, a conclusion among
 * them, is `not_applicable`.
 */
export function verifyAgreementReceiptSemantics(
  input: JwsPayload | { payload: unknown } | { jws: string } | { receipt_jws: string },
): AgreementVerdict {
  let payload: unknown = input;
  const form = input as Record<string, unknown>;
  if (isRecord(form) && !('svc' in form)) {
    const jws =
      typeof form.jws === 'string' ? form.jws : typeof form.receipt_jws === 'string' ? form.receipt_jws : null;
    if (jws !== null) {
      const decoded = decodedOrNull(jws);
      if (!decoded) {
        return { result: 'invalid', status: 'failed', reason: 'the receipt is not a valid compact JWS', signed: null };
      }
      payload = decoded.payload;
    } else if ('payload' in form) payload = form.payload;
  }
  const signed = isRecord(payload) && isRecord(payload.svc) ? signedDecision(payload) : null;
  const report = checkAgreement(payload);
  if (report.result === 'valid') return { ...report, status: 'verified', signed };
  if (report.result === 'invalid') return { ...report, status: 'failed', signed };
  return { ...report, status: isAgreementDecision(payload) ? 'unavailable' : 'not_applicable', signed };
}

function isAgreementDecision(payload: unknown): boolean {
  const svc = isRecord(payload) && isRecord(payload.svc) ? payload.svc : {};
  const mechanism = isRecord(svc.mechanism) ? svc.mechanism : {};
  const parameters = isRecord(mechanism.parameters) ? mechanism.parameters : {};
  return svc.decision_kind !== 'conclusion' && parameters.agreement === true;
}

/** What was proven of one receipt. `null` means "not checked" (no JWKS given; a conclusion has nothing to replay). */
export interface ReceiptReport {
  /** Where it sits in the outcome body: `decisions[0]`, …, `conclusion`. */
  label: string;
  sequence: number | null;
  decision_id: string | null;
  receipt_hash: string | null;
  signature: boolean | null;
  hash: boolean;
  link: boolean;
  replay: boolean | null;
  /**
   * Whether the receipt was signed for the room being verified: its `svc.room_id`, `iss` and `aud` all
   * name it. Null when no room was given (the three must then still agree with one another).
   */
  room_match: boolean | null;
  /** Whether every unsigned field the body shows beside this receipt agrees with its signed twin. */
  fields_match: boolean;
  /**
   * Who each signed ballot is attributed to: `agent_id` (a mandate's sub, or `participant:<id>`), the
   * issuer of a mandate-cast ballot (`agent_iss`; null for token ballots and receipts signed before
   * the field existed) and the mandate's jti. Empty for conclusions and hidden votes.
   */
  ballots: BallotAttribution[];
  ok: boolean;
  errors: string[];
}

/** A decision as its receipt signs it, and where it sits in the outcome body (`decisions[0]`, …). */
export interface SignedDecisionReport extends SignedDecision {
  label: string;
}

export interface ChainReport {
  /**
   * Every check passed: signatures, the room, every field. Never true when the signatures were not
   * checked or no room was given.
   */
  ok: boolean;
  /** Whether signatures were checked against a JWKS; false when the caller gave none. */
  signatures_checked: boolean;
  /**
   * Whether the receipts were compared with the room being verified; false when the caller gave no
   * room. `room_source` says where the compared room came from.
   */
  room_checked: boolean;
  room_source: 'given' | 'from-body' | null;
  /**
   * Every check that needs no key passed: hashes, links, chain order, replay, the room and the body's
   * fields. On its own it proves nothing about who wrote the receipts: anyone can build a consistent
   * unsigned chain.
   */
  chain_ok: boolean;
  /** The room the receipts are signed for (their `svc.room_id`); null when there is no receipt. */
  room: string | null;
  /**
   * Each sealed decision as signed: question, options, status, winner, tallies, ballots. Report these,
   * never the body's unsigned copies, and only when `ok`.
   */
  decisions: SignedDecisionReport[];
  /** The conclusion as signed (its closing statement), or null when the room has none. */
  conclusion: SignedConclusion | null;
  receipts: ReceiptReport[];
  /** Every failure, each prefixed with the receipt or the field it concerns. */
  errors: string[];
}

/** What to verify against. Without both a JWKS and a room, the report is never ok. */
export interface ChainOptions {
  /** The service's signing keys (GET /.well-known/jwks.json). */
  jwks?: Jwks | undefined;
  /**
   * The room you are asking about, as its URL (`https://host/r/<slug>`): every receipt must be signed
   * for it. `'from-body'` trusts the room the outcome body names for itself (its slug on the service
   * its `verification.jwks_url` points to): that proves the receipts agree with the body, not that the
   * body is the room you meant.
   */
  room?: string | undefined;
}

/** The error a report carries when no JWKS was given: the verification is not a success. */
export const SIGNATURES_NOT_CHECKED =
  'signatures not checked: no JWKS given, so nothing proves who signed these receipts';

/** The error a report carries when no room was given: the verification is not a success. */
export const ROOM_NOT_CHECKED =
  'room not checked: no room given, so nothing proves these are the receipts of the room you mean; pass { room: "<room url>" }, or { room: "from-body" } to trust the room the outcome names';

/**
 * Verifies every receipt of an `/outcome` body, in chain order: each `receipt_jws` hashes to its
 * `receipt_hash`, each `prev_hash` links to the receipt before it (the first to nothing) and is the
 * one signed, each signature verifies against the JWKS by `kid`, each decision's outcome replays from
 * its signed ballots, each receipt is signed for the room (`svc.room_id`, `iss`, `aud`) and sits at
 * its signed `sequence`, and every unsigned field the body shows (`resolved_winner`, `question`,
 * `closing_statement`, …) agrees with its signed twin. A room that is resolved or concluded must end on
 * a receipt. What it reports of the room (`room`, `decisions`, `conclusion`) is taken from the signed
 * payloads only.
 *
 * Fails closed: without a JWKS or without a room the report is never `ok` (its errors say what was
 * not checked); `chain_ok` then tells whether everything else held.
 */
export async function verifyRoomReceiptChain(outcome: unknown, options: ChainOptions = {}): Promise<ChainReport> {
  const body = isRecord(outcome) ? outcome : {};
  const errors: string[] = [];
  const empty = { receipts: [], room: null, decisions: [], conclusion: null };
  if (!Array.isArray(body.decisions)) {
    const envelope = isRecord(body.error) ? body.error : undefined;
    const why = envelope
      ? `this is an error envelope, not an outcome (${String(envelope.code)}: ${String(envelope.message)})`
      : 'the outcome body has no decisions array';
    return {
      ok: false,
      signatures_checked: false,
      room_checked: false,
      room_source: null,
      chain_ok: false,
      ...empty,
      errors: [why],
    };
  }
  const { room, source, error: roomError } = roomToCheck(body, options.room);

  const receipts: ReceiptReport[] = [];
  const decisions: SignedDecisionReport[] = [];
  let conclusion: SignedConclusion | null = null;
  let signedRoomId: string | null = null;
  let latest: { row: Record<string, unknown>; payload: JwsPayload } | null = null;
  let head: string | null = null;
  for (const [index, { label, entry }] of outcomeReceipts(body).entries()) {
    const { report, payload } = await verifyEntry(label, entry, {
      previous: head,
      position: index + 1,
      jwks: options.jwks,
      room,
      firstRoom: signedRoomId,
    });
    receipts.push(report);
    errors.push(...report.errors.map((error) => `${label}: ${error}`));
    if (typeof entry.receipt_hash === 'string') head = entry.receipt_hash;
    if (!payload) continue;
    const svc = isRecord(payload.svc) ? payload.svc : {};
    if (signedRoomId === null && typeof svc.room_id === 'string') signedRoomId = svc.room_id;
    if (label === 'conclusion') conclusion = signedConclusion(payload);
    else {
      decisions.push({ label, ...signedDecision(payload) });
      latest = { row: entry, payload };
    }
  }
  // The body's own summary of its latest decision, and its slug, are unsigned copies too.
  const summaryProblems = summaryErrors(body, latest, room);
  // The order rules of the walk (unsealed rows last, a resolved room ends sealed) come from the shared
  // chain check; its link and hash findings are already reported per receipt above.
  const perReceipt = /does not link|does not hash|has no receipt_jws/;
  const orderErrors = checkChainOrder(body).errors.filter((error) => !perReceipt.test(error));
  errors.push(...summaryProblems, ...orderErrors);
  const chainOk =
    summaryProblems.length === 0 &&
    orderErrors.length === 0 &&
    receipts.every((r) => r.errors.every((e) => e.startsWith(SIGNATURE_PREFIX)));
  if (roomError) errors.push(roomError);
  if (!options.jwks) errors.push(SIGNATURES_NOT_CHECKED);
  return {
    ok: errors.length === 0,
    signatures_checked: options.jwks !== undefined,
    room_checked: room !== null,
    room_source: room === null ? null : source,
    chain_ok: chainOk,
    room: signedRoomId,
    decisions,
    conclusion,
    receipts,
    errors,
  };
}

/** The room the receipts must name, from the caller's option; an error when there is none to check. */
function roomToCheck(
  body: Record<string, unknown>,
  option: string | undefined,
): { room: string | null; source: 'given' | 'from-body'; error: string | null } {
  if (option === undefined || option === '') return { room: null, source: 'given', error: ROOM_NOT_CHECKED };
  if (option !== ROOM_FROM_BODY) return { room: normalizeRoomUrl(option), source: 'given', error: null };
  const named = outcomeRoomUrl(body);
  if (named !== null) return { room: named, source: 'from-body', error: null };
  return {
    room: null,
    source: 'from-body',
    error:
      'room not checked: the outcome names no room (its slug and verification.jwks_url), so { room: "from-body" } has nothing to trust; pass the room URL',
  };
}

/** How a receipt's signature failure starts, so `chain_ok` can leave it out. */
const SIGNATURE_PREFIX = 'signature: ';

async function verifyEntry(
  label: string,
  entry: Record<string, unknown>,
  at: {
    previous: string | null;
    position: number;
    jwks: Jwks | undefined;
    /** The room asked about; null when none was given. */
    room: string | null;
    /** The room the chain's first receipt names, which every later one must name too. */
    firstRoom: string | null;
  },
): Promise<{ report: ReceiptReport; payload: JwsPayload | null }> {
  const errors: string[] = [];
  const jws = typeof entry.receipt_jws === 'string' ? entry.receipt_jws : null;
  const claimedHash = typeof entry.receipt_hash === 'string' ? entry.receipt_hash : null;
  const hash = jws !== null && claimedHash !== null && receiptHash(jws) === claimedHash;
  if (!hash) errors.push(`receipt_jws does not hash to receipt_hash ${JSON.stringify(claimedHash)}`);
  const link = (entry.prev_hash ?? null) === at.previous;
  if (!link) {
    errors.push(`prev_hash ${JSON.stringify(entry.prev_hash ?? null)} does not link to ${JSON.stringify(at.previous)}`);
  }

  let payload: JwsPayload | null = null;
  let signature: boolean | null = null;
  if (jws !== null) {
    try {
      payload = decodeCompact(jws).payload;
    } catch (error) {
      errors.push(`receipt_jws is malformed: ${(error as Error).message}`);
    }
  }
  if (jws !== null && at.jwks) {
    try {
      await verifyCompactReceipt(jws, await publicKeyFromJwks(at.jwks, receiptKid(jws)));
      signature = true;
    } catch (error) {
      signature = false;
      errors.push(`${SIGNATURE_PREFIX}${(error as Error).message}`);
    }
  }

  const svc = isRecord(payload?.svc) ? payload.svc : {};
  if (payload && (svc.prev_hash ?? null) !== (entry.prev_hash ?? null)) {
    errors.push('the signed prev_hash differs from the prev_hash the outcome shows');
  }
  // A receipt moved to another place in the chain (rows reordered, two JWSs swapped) signs another place.
  if (payload && svc.sequence !== at.position) {
    errors.push(`the signed sequence ${JSON.stringify(svc.sequence)} is not its place in the chain, ${at.position}`);
  }
  let roomMatch: boolean | null = null;
  let fieldsMatch = true;
  if (payload) {
    const roomProblems = roomErrors(payload, at.room);
    const signedRoomId = isRecord(payload.svc) ? payload.svc.room_id : undefined;
    if (at.room === null && at.firstRoom !== null && signedRoomId !== at.firstRoom) {
      roomProblems.push(
        `the signed svc.room_id ${JSON.stringify(signedRoomId)} is not the room of the first receipt, ${JSON.stringify(at.firstRoom)}`,
      );
    }
    roomMatch = roomProblems.length > 0 ? false : at.room === null ? null : true;
    errors.push(...roomProblems);
    const fieldProblems = label === 'conclusion' ? conclusionErrors(entry, payload) : decisionRowErrors(entry, payload);
    fieldsMatch = fieldProblems.length === 0;
    errors.push(...fieldProblems);
  }
  let replay: boolean | null = null;
  if (payload && svc.decision_kind !== 'conclusion') {
    const replayed = replayReceipt(payload);
    const agreement = checkAgreement(payload);
    if (replayed.result === 'mismatch') errors.push(`the outcome does not replay: ${replayed.reason}`);
    if (agreement.result === 'invalid') errors.push(`agreement rules violated: ${agreement.reason}`);
    replay = replayed.result === 'unavailable' ? null : replayed.result === 'match' && agreement.result !== 'invalid';
  }
  const report: ReceiptReport = {
    label,
    sequence: typeof svc.sequence === 'number' ? svc.sequence : null,
    decision_id: typeof svc.decision_id === 'string' ? svc.decision_id : null,
    receipt_hash: claimedHash,
    signature,
    hash,
    link,
    replay,
    room_match: roomMatch,
    fields_match: fieldsMatch,
    ballots: ballotAttributions(svc),
    ok: errors.length === 0,
    errors,
  };
  return { report, payload };
}
