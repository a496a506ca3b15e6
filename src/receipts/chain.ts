/**
 * Offline checks of a room's receipt chain that need no key (docs/receipts.md): links, hashes, order. Pure, so
 * the server's tests and the browser-safe client library share one implementation.
 */
import { decodeCompact } from './compact.js';
import { RECEIPT_HASH_PATTERN, receiptHash } from './hash.js';

export interface ChainCheck {
  ok: boolean;
  errors: string[];
}

/** The header `kid` of a receipt (docs/receipts.md). Parses with the strict rules of docs/receipts.md. */
export function receiptKid(jws: string): string {
  const { kid } = decodeCompact(jws).header;
  if (typeof kid !== 'string' || kid === '') throw new Error('receipt header has no kid');
  return kid;
}

/**
 * The Ed25519 signing key with this `kid` in a JWKS, or in any document with a `keys` array (the
 * discovery document works too, docs/receipts.md), as a JWK.
 */
export function ed25519JwkFor(
  doc: { keys: unknown[] },
  kid: string,
): { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string } {
  const keys: unknown = doc?.keys;
  if (!Array.isArray(keys)) throw new Error('key document has no keys array');
  const jwk = keys.find((k): k is Record<string, unknown> => isRecord(k) && k.kid === kid);
  if (!jwk) throw new Error(`no key with kid ${kid} in the key document`);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw new Error(`key ${kid} is not an OKP Ed25519 key`);
  }
  if (jwk.alg !== undefined && jwk.alg !== 'EdDSA') throw new Error(`key ${kid} is not an EdDSA key`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new Error(`key ${kid} is not a signing key`);
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid };
}

/** Every receipt of an `/outcome` body, in chain order: the sealed decision rows, then the conclusion. */
export function outcomeReceipts(outcomeBody: unknown): { label: string; entry: Record<string, unknown> }[] {
  const body = isRecord(outcomeBody) ? outcomeBody : {};
  const rows = Array.isArray(body.decisions) ? body.decisions : [];
  const receipts: { label: string; entry: Record<string, unknown> }[] = [];
  rows.forEach((row, i) => {
    if (isRecord(row) && row.receipt_jws != null) receipts.push({ label: `decisions[${i}]`, entry: row });
  });
  if (isRecord(body.conclusion)) receipts.push({ label: 'conclusion', entry: body.conclusion });
  return receipts;
}

/**
 * Offline walk of an `/outcome` body (docs/receipts.md): sealed rows come first and link by `prev_hash` in
 * array order, a resolved or concluded room ends on a sealed row, the conclusion links to the last
 * sealed row, and every `receipt_jws` hashes to its `receipt_hash`. Signatures are not checked here;
 * see `verifyOutcomeSignatures`. Nor is the room, nor the unsigned fields beside the receipts: this is
 * the structure only, and never enough to tell a reader a room's history verified. The client's
 * `verifyRoomReceiptChain` (client/verify.ts) adds the signatures, the room and the fields (binding.ts).
 */
export function verifyRoomReceiptChain(outcomeBody: unknown): ChainCheck {
  const errors: string[] = [];
  const body = isRecord(outcomeBody) ? outcomeBody : {};
  const rows = body.decisions;
  if (!Array.isArray(rows)) return { ok: false, errors: ['outcome body has no decisions array'] };

  let head: string | null = null;
  let seenUnsealed = false;
  rows.forEach((raw, i) => {
    const row = isRecord(raw) ? raw : {};
    const label = `decisions[${i}]${typeof row.id === 'string' ? ` (${row.id})` : ''}`;
    if (row.receipt_hash === null || row.receipt_hash === undefined) {
      seenUnsealed = true;
      if (row.prev_hash != null || row.receipt_jws != null) {
        errors.push(`${label}: unsealed row carries prev_hash or receipt_jws`);
      }
      return;
    }
    if (seenUnsealed) errors.push(`${label}: sealed row appears after an unsealed row`);
    if (typeof row.receipt_hash !== 'string' || !RECEIPT_HASH_PATTERN.test(row.receipt_hash)) {
      errors.push(`${label}: receipt_hash is not "sha256:<64 hex>"`);
    }
    if (row.prev_hash !== head) {
      errors.push(`${label}: prev_hash ${show(row.prev_hash)} does not link to ${show(head)}`);
    }
    checkJwsHash(row, label, errors);
    head = typeof row.receipt_hash === 'string' ? row.receipt_hash : head;
  });

  if (body.status === 'resolved' || body.status === 'concluded') {
    const last: unknown = rows.at(-1);
    const lastHash = isRecord(last) ? last.receipt_hash : undefined;
    if (typeof lastHash !== 'string' || !lastHash.startsWith('sha256:')) {
      errors.push(`room is ${body.status} but the last decision row carries no sha256: receipt_hash`);
    }
  }

  if (body.conclusion !== null && body.conclusion !== undefined) {
    const conclusion = isRecord(body.conclusion) ? body.conclusion : {};
    if (conclusion.prev_hash !== head) {
      errors.push(`conclusion: prev_hash ${show(conclusion.prev_hash)} does not link to ${show(head)}`);
    }
    checkJwsHash(conclusion, 'conclusion', errors);
  }

  return { ok: errors.length === 0, errors };
}

function checkJwsHash(entry: Record<string, unknown>, label: string, errors: string[]): void {
  if (typeof entry.receipt_jws !== 'string') {
    errors.push(`${label}: sealed receipt has no receipt_jws`);
  } else if (receiptHash(entry.receipt_jws) !== entry.receipt_hash) {
    errors.push(`${label}: receipt_jws does not hash to receipt_hash ${show(entry.receipt_hash)}`);
  }
}

/**
 * Who each ballot of a decision receipt's `svc` is attributed to: `agent_id` (a mandate's sub, or
 * `participant:<id>`), the issuer of a mandate-cast ballot (`agent_iss`; null for token ballots and
 * receipts signed before the field existed) and the mandate's jti (docs/architecture.md, Credentials).
 */
export interface BallotAttribution {
  agent_id: string;
  agent_iss: string | null;
  mandate_ref: string | null;
}

export function ballotAttributions(svc: Record<string, unknown>): BallotAttribution[] {
  if (!Array.isArray(svc.votes)) return [];
  return svc.votes.filter(isRecord).map((vote) => ({
    agent_id: String(vote.agent_id),
    agent_iss: typeof vote.agent_iss === 'string' ? vote.agent_iss : null,
    mandate_ref: typeof vote.mandate_ref === 'string' ? vote.mandate_ref : null,
  }));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
