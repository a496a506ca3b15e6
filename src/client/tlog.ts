/**
 * Transparency-log verification for the client (docs/transparency-log.md), browser-safe: the
 * log's own Merkle and note code (pure JS SHA-256, WebCrypto Ed25519), nothing server-only.
 *
 * - `verifyCheckpoint(note, verifierKey)`: the C2SP signed note carries a valid signature by the
 *   log's key (from discovery's `audit_log.verifier_key`), and its body is a checkpoint of that origin.
 * - `verifyInclusion(receiptJws, index, proof, checkpoint)`: the receipt's exact JWS bytes are leaf
 *   `index` of the checkpoint's tree.
 * - `verifyConsistency(older, newer, proof)`: the newer checkpoint's tree extends the older one's
 *   (a rollback or a fork fails).
 */
import { type Hash, leafHash, verifyConsistency as consistent, verifyInclusion as included } from '../tlog/merkle.js';
import { fromBase64, noteSignedBy, parseCheckpoint, parseNote, parseVerifierKey, toBase64 } from '../tlog/note.js';

export interface VerifiedCheckpoint {
  origin: string;
  size: number;
  /** Root hash, standard base64 as the checkpoint writes it. */
  root: string;
  /** The exact note text that was verified. */
  note: string;
}

export class LogVerificationError extends Error {
  constructor(
    readonly failure: 'checkpoint' | 'inclusion' | 'consistency',
    message: string,
  ) {
    super(message);
    this.name = 'LogVerificationError';
  }
}

export async function verifyCheckpoint(note: string, verifierKey: string): Promise<VerifiedCheckpoint> {
  try {
    const key = parseVerifierKey(verifierKey);
    const parsed = parseNote(note);
    if (!(await noteSignedBy(parsed, key))) {
      throw new Error(`no valid signature by ${key.name} on the checkpoint`);
    }
    const body = parseCheckpoint(parsed.text);
    if (body.origin !== key.name) throw new Error(`the checkpoint's origin ${body.origin} is not ${key.name}`);
    return { origin: body.origin, size: body.size, root: toBase64(body.root), note };
  } catch (error) {
    if (error instanceof LogVerificationError) throw error;
    throw new LogVerificationError('checkpoint', (error as Error).message);
  }
}

/**
 * Whether the checkpoint note carries a valid C2SP cosignature (tlog-cosignature/v1) by this
 * witness key (`<name>+<hex id>+<base64(0x04 ‖ key)>`, as discovery's `audit_log.witnesses` lists).
 */
export async function verifyCosignature(note: string, witnessKey: string): Promise<boolean> {
  try {
    return await noteSignedBy(parseNote(note), parseVerifierKey(witnessKey));
  } catch {
    return false;
  }
}

function hashesOf(proof: readonly (string | Uint8Array)[]): Hash[] {
  return proof.map((item) => (typeof item === 'string' ? fromBase64(item) : item));
}

/** Whether `receiptJws` (the leaf data: its exact bytes) is leaf `index` of the checkpoint's tree. */
export function verifyInclusion(
  receiptJws: string,
  index: number,
  proof: readonly (string | Uint8Array)[],
  checkpoint: Pick<VerifiedCheckpoint, 'size' | 'root'>,
): boolean {
  try {
    const leaf = leafHash(new TextEncoder().encode(receiptJws));
    return included(leaf, index, checkpoint.size, hashesOf(proof), fromBase64(checkpoint.root));
  } catch {
    return false;
  }
}

/** Whether `newer` extends `older` (same history, more leaves). */
export function verifyConsistency(
  older: Pick<VerifiedCheckpoint, 'size' | 'root'>,
  newer: Pick<VerifiedCheckpoint, 'size' | 'root'>,
  proof: readonly (string | Uint8Array)[],
): boolean {
  try {
    return consistent(older.size, newer.size, hashesOf(proof), fromBase64(older.root), fromBase64(newer.root));
  } catch {
    return false;
  }
}

/** The `transparency_log` field of an `/outcome` row. */
export interface LogInclusion {
  index: number;
  tree_size: number;
  checkpoint: string;
  inclusion_proof: string[];
}

/** One `/outcome` row's log inclusion: its checkpoint is signed by the log and includes the receipt. */
export async function verifyReceiptInLog(
  receiptJws: string,
  inclusion: LogInclusion,
  verifierKey: string,
): Promise<VerifiedCheckpoint> {
  const checkpoint = await verifyCheckpoint(inclusion.checkpoint, verifierKey);
  if (checkpoint.size !== inclusion.tree_size) {
    throw new LogVerificationError(
      'inclusion',
      `the proof claims size ${inclusion.tree_size}, the checkpoint ${checkpoint.size}`,
    );
  }
  if (!verifyInclusion(receiptJws, inclusion.index, inclusion.inclusion_proof, checkpoint)) {
    throw new LogVerificationError('inclusion', `the receipt is not leaf ${inclusion.index} of the checkpoint's tree`);
  }
  return checkpoint;
}
