/**
 * Offline verification of a room's receipts (docs/receipts.md), for Node ≥ 20 and browsers alike: WebCrypto
 * Ed25519 for signatures, and for everything else the same pure modules the server's own checks use
 * (strict compact-JWS parsing, receipt hashing, the chain walk, the mechanisms' replay). Nothing here
 * touches the network: give it an `/outcome` body and a JWKS you fetched or were handed.
 */
import { replayReceipt, verifyAgreementReceiptSemantics } from '../mechanisms/replay.js';
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

export { ballotAttributions, receiptKid, replayReceipt, verifyAgreementReceiptSemantics };
export type { BallotAttribution };
export type { AgreementReport, ReplayReport } from '../mechanisms/replay.js';

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

/**
 * One compact receipt against one Ed25519 key (a WebCrypto key or a JWK): the strict parse (docs/receipts.md, Verifying),
 * alg/typ/kid, the signature, and the receipt hash when `expectedHash` is given.
 */
export async function verifyCompactReceipt(
  jws: string,
  key: WebCryptoKey | PublicJwk,
  expectedHash?: string,
): Promise<{ header: JoseHeader; payload: JwsPayload }> {
  let decoded: ReturnType<typeof decodeCompact>;
  let kid: string;
  try {
    decoded = decodeCompact(jws);
    kid = checkJwsHeader(decoded.header, RECEIPT_TYP);
  } catch (error) {
    throw new ReceiptVerificationError('malformed', (error as Error).message);
  }
  const cryptoKey =
    'kty' in key ? await crypto.subtle.importKey('jwk', key, { name: 'Ed25519' }, false, ['verify']) : key;
  const valid =
    decoded.signature.length === 64 &&
    (await crypto.subtle.verify(
      { name: 'Ed25519' },
      cryptoKey,
      decoded.signature as Uint8Array<ArrayBuffer>,
      new TextEncoder().encode(decoded.signingInput),
    ));
  if (!valid) {
    throw new ReceiptVerificationError('signature', `the signature does not verify with the key for kid ${kid}`);
  }
  if (expectedHash !== undefined) {
    const actual = receiptHash(jws);
    if (actual !== expectedHash) {
      throw new ReceiptVerificationError('hash', `receipt_jws hashes to ${actual}, not ${expectedHash}`);
    }
  }
  return { header: decoded.header, payload: decoded.payload };
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
  ok: boolean;
  receipts: ReceiptReport[];
  /** Every failure, each prefixed with the receipt it concerns. */
  errors: string[];
}

/**
 * Verifies every receipt of an `/outcome` body, in chain order: each `receipt_jws` hashes to its
 * `receipt_hash`, each `prev_hash` links to the receipt before it (the first to nothing), each
 * signature verifies against the JWKS by `kid` (when one is given), and each decision's outcome
 * replays from its signed ballots. A room that is resolved or concluded must end on a receipt.
 */
export async function verifyRoomReceiptChain(outcome: unknown, options: { jwks?: Jwks } = {}): Promise<ChainReport> {
  const body = isRecord(outcome) ? outcome : {};
  const errors: string[] = [];
  if (!Array.isArray(body.decisions)) {
    const envelope = isRecord(body.error) ? body.error : undefined;
    const why = envelope
      ? `this is an error envelope, not an outcome (${String(envelope.code)}: ${String(envelope.message)})`
      : 'the outcome body has no decisions array';
    return { ok: false, receipts: [], errors: [why] };
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
  errors.push(...checkChainOrder(body).errors.filter((error) => !perReceipt.test(error)));
  return { ok: errors.length === 0, receipts, errors };
}

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
      errors.push(`signature: ${(error as Error).message}`);
    }
  }

  const svc = isRecord(payload?.svc) ? payload.svc : {};
  if (payload && (svc.prev_hash ?? null) !== (entry.prev_hash ?? null)) {
    errors.push('the signed prev_hash differs from the prev_hash the outcome shows');
  }
  let replay: boolean | null = null;
  if (payload && svc.decision_kind !== 'conclusion') {
    const replayed = replayReceipt(payload);
    const agreement = verifyAgreementReceiptSemantics(payload);
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
