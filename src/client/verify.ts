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
import { checkJwsHeader, decodeCompact, type JoseHeader, type JwsPayload, RECEIPT_TYP } from '../receipts/compact.js';
import { receiptHash } from '../receipts/hash.js';

export { ballotAttributions, receiptKid, replayReceipt };
export type { AgreementReport, BallotAttribution };
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
}

/**
 * Replays an agreement decision's signed ballots and refuses an inconsistent unanimity outcome
 * (docs/receipts.md, Verifying). Takes a receipt payload, `{ payload }`, or `{ jws }` (the compact receipt, decoded here;
 * its signature is `verifyCompactReceipt`'s job). A receipt that is not an agreement decision, a
 * conclusion among them, is `not_applicable`.
 */
export function verifyAgreementReceiptSemantics(
  input: JwsPayload | { payload: unknown } | { jws: string },
): AgreementVerdict {
  let payload: unknown = input;
  const form = input as Record<string, unknown>;
  if (isRecord(form) && !('svc' in form)) {
    if (typeof form.jws === 'string') {
      const decoded = decodedOrNull(form.jws);
      if (!decoded) return { result: 'invalid', status: 'failed', reason: 'the receipt is not a valid compact JWS' };
      payload = decoded.payload;
    } else if ('payload' in form) payload = form.payload;
  }
  const report = checkAgreement(payload);
  if (report.result === 'valid') return { ...report, status: 'verified' };
  if (report.result === 'invalid') return { ...report, status: 'failed' };
  return { ...report, status: isAgreementDecision(payload) ? 'unavailable' : 'not_applicable' };
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
   * Who each signed ballot is attributed to: `agent_id` (a mandate's sub, or `participant:<id>`), the
   * issuer of a mandate-cast ballot (`agent_iss`; null for token ballots and receipts signed before
   * the field existed) and the mandate's jti. Empty for conclusions and hidden votes.
   */
  ballots: BallotAttribution[];
  ok: boolean;
  errors: string[];
}

export interface ChainReport {
  /** Every check passed, signatures included. Never true when the signatures were not checked. */
  ok: boolean;
  /** Whether signatures were checked against a JWKS; false when the caller gave none. */
  signatures_checked: boolean;
  /**
   * Every check that needs no key passed: hashes, links, chain order and replay. On its own it proves
   * nothing about who wrote the receipts: anyone can build a consistent unsigned chain.
   */
  chain_ok: boolean;
  receipts: ReceiptReport[];
  /** Every failure, each prefixed with the receipt it concerns. */
  errors: string[];
}

/** The error a report carries when no JWKS was given: the verification is not a success. */
export const SIGNATURES_NOT_CHECKED =
  'signatures not checked: no JWKS given, so nothing proves who signed these receipts';

/**
 * Verifies every receipt of an `/outcome` body, in chain order: each `receipt_jws` hashes to its
 * `receipt_hash`, each `prev_hash` links to the receipt before it (the first to nothing), each
 * signature verifies against the JWKS by `kid`, and each decision's outcome replays from its signed
 * ballots. A room that is resolved or concluded must end on a receipt.
 *
 * Fails closed: without a JWKS the report is never `ok` (its errors say the signatures were not
 * checked); `chain_ok` then tells whether everything else held.
 */
export async function verifyRoomReceiptChain(outcome: unknown, options: { jwks?: Jwks } = {}): Promise<ChainReport> {
  const body = isRecord(outcome) ? outcome : {};
  const errors: string[] = [];
  if (!Array.isArray(body.decisions)) {
    const envelope = isRecord(body.error) ? body.error : undefined;
    const why = envelope
      ? `this is an error envelope, not an outcome (${String(envelope.code)}: ${String(envelope.message)})`
      : 'the outcome body has no decisions array';
    return { ok: false, signatures_checked: false, chain_ok: false, receipts: [], errors: [why] };
  }
  const receipts: ReceiptReport[] = [];
  let head: string | null = null;
  for (const { label, entry } of outcomeReceipts(body)) {
    const report = await verifyEntry(label, entry, head, options.jwks);
    receipts.push(report);
    errors.push(...report.errors.map((error) => `${label}: ${error}`));
    if (typeof entry.receipt_hash === 'string') head = entry.receipt_hash;
  }
  // The order rules of the walk (unsealed rows last, a resolved room ends sealed) come from the shared
  // chain check; its link and hash findings are already reported per receipt above.
  const perReceipt = /does not link|does not hash|has no receipt_jws/;
  const orderErrors = checkChainOrder(body).errors.filter((error) => !perReceipt.test(error));
  errors.push(...orderErrors);
  const chainOk =
    orderErrors.length === 0 && receipts.every((r) => r.errors.every((e) => e.startsWith(SIGNATURE_PREFIX)));
  if (!options.jwks) errors.push(SIGNATURES_NOT_CHECKED);
  return {
    ok: errors.length === 0,
    signatures_checked: options.jwks !== undefined,
    chain_ok: chainOk,
    receipts,
    errors,
  };
}

/** How a receipt's signature failure starts, so `chain_ok` can leave it out. */
const SIGNATURE_PREFIX = 'signature: ';

async function verifyEntry(
  label: string,
  entry: Record<string, unknown>,
  previous: string | null,
  jwks: Jwks | undefined,
): Promise<ReceiptReport> {
  const errors: string[] = [];
  const jws = typeof entry.receipt_jws === 'string' ? entry.receipt_jws : null;
  const claimedHash = typeof entry.receipt_hash === 'string' ? entry.receipt_hash : null;
  const hash = jws !== null && claimedHash !== null && receiptHash(jws) === claimedHash;
  if (!hash) errors.push(`receipt_jws does not hash to receipt_hash ${JSON.stringify(claimedHash)}`);
  const link = (entry.prev_hash ?? null) === previous;
  if (!link) {
    errors.push(`prev_hash ${JSON.stringify(entry.prev_hash ?? null)} does not link to ${JSON.stringify(previous)}`);
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
  if (jws !== null && jwks) {
    try {
      await verifyCompactReceipt(jws, await publicKeyFromJwks(jwks, receiptKid(jws)));
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
  let replay: boolean | null = null;
  if (payload && svc.decision_kind !== 'conclusion') {
    const replayed = replayReceipt(payload);
    const agreement = checkAgreement(payload);
    if (replayed.result === 'mismatch') errors.push(`the outcome does not replay: ${replayed.reason}`);
    if (agreement.result === 'invalid') errors.push(`agreement rules violated: ${agreement.reason}`);
    replay = replayed.result === 'unavailable' ? null : replayed.result === 'match' && agreement.result !== 'invalid';
  }
  return {
    label,
    sequence: typeof svc.sequence === 'number' ? svc.sequence : null,
    decision_id: typeof svc.decision_id === 'string' ? svc.decision_id : null,
    receipt_hash: claimedHash,
    signature,
    hash,
    link,
    replay,
    ballots: ballotAttributions(svc),
    ok: errors.length === 0,
    errors,
  };
}
