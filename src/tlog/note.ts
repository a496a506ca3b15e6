/**
 * C2SP signed-note and tlog-checkpoint, the parts a verifier needs: parsing a note, key ids,
 * verifier key strings, checkpoint bodies, and Ed25519 verification through WebCrypto (Node ≥ 20
 * and browsers). Signing is server-only (`note-signer.ts`).
 *
 * A note is its text (every line ending in a newline), an empty line, then signature lines
 * `— <key name> <base64(key id ‖ signature)>`. An Ed25519 key's id is the first 4 bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key); its verifier key string is
 * `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
 */
import { sha256 } from '@noble/hashes/sha2.js';

export const ED25519_ALG = 0x01;
/** C2SP tlog-cosignature/v1 (witnesses): Ed25519 over a timestamped message. */
export const COSIGNATURE_ALG = 0x04;

const encoder = new TextEncoder();

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard padded base64, canonical only (re-encoding must give the same text). */
export function fromBase64(text: string): Uint8Array {
  if (!BASE64.test(text) || text.length % 4 !== 0) throw new Error('not base64');
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  if (toBase64(bytes) !== text) throw new Error('non-canonical base64');
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A key name: non-empty, no whitespace, no `+` (C2SP signed-note). */
export function isKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

export function keyId(name: string, alg: number, publicKey: Uint8Array): Uint8Array {
  const digest = sha256
    .create()
    .update(encoder.encode(name))
    .update(new Uint8Array([0x0a, alg]))
    .update(publicKey)
    .digest();
  return digest.slice(0, 4);
}

export interface VerifierKey {
  name: string;
  id: Uint8Array;
  alg: number;
  publicKey: Uint8Array;
}

export function verifierKeyString(name: string, publicKey: Uint8Array, alg = ED25519_ALG): string {
  const keyBytes = new Uint8Array(publicKey.length + 1);
  keyBytes[0] = alg;
  keyBytes.set(publicKey, 1);
  return `${name}+${toHex(keyId(name, alg, publicKey))}+${toBase64(keyBytes)}`;
}

export function parseVerifierKey(text: string): VerifierKey {
  const parts = text.split('+');
  // The base64 of the key may itself contain '+': the name and the id come first.
  if (parts.length < 3) throw new Error('a verifier key is <name>+<hex key id>+<base64 key>');
  const [name, idHex] = parts as [string, string];
  const key = fromBase64(parts.slice(2).join('+'));
  if (!isKeyName(name)) throw new Error('the verifier key name is empty or has spaces');
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new Error('the verifier key id is not 8 hex digits');
  const alg = key[0];
  const publicKey = key.slice(1);
  if ((alg !== ED25519_ALG && alg !== COSIGNATURE_ALG) || publicKey.length !== 32) {
    throw new Error('only Ed25519 verifier keys (type 0x01 or 0x04) are supported');
  }
  if (toHex(keyId(name, alg, publicKey)) !== idHex) throw new Error('the verifier key id does not match its key');
  return { name, id: keyId(name, alg, publicKey), alg, publicKey };
}

export interface NoteSignature {
  name: string;
  id: Uint8Array;
  /** The signature bytes after the key id (for a cosignature: timestamp ‖ signature). */
  signature: Uint8Array;
}

export interface Note {
  /** The signed text, its final newline included. */
  text: string;
  signatures: NoteSignature[];
}

const MAX_NOTE_BYTES = 1_000_000;

export function parseNote(note: string): Note {
  if (note.length > MAX_NOTE_BYTES) throw new Error('the note is too long');
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('a signed note is text, an empty line and signature lines');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  const signatures = lines.map((line) => {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/u.exec(line);
    if (!match) throw new Error(`malformed signature line: ${JSON.stringify(line.slice(0, 80))}`);
    const bytes = fromBase64(match[2] as string);
    if (bytes.length < 5) throw new Error('a signature line is too short');
    return { name: match[1] as string, id: bytes.slice(0, 4), signature: bytes.slice(4) };
  });
  if (signatures.length === 0) throw new Error('the note has no signature');
  return { text, signatures };
}

export function formatSignatureLine(name: string, id: Uint8Array, signature: Uint8Array): string {
  const bytes = new Uint8Array(id.length + signature.length);
  bytes.set(id);
  bytes.set(signature, id.length);
  return `\u2014 ${name} ${toBase64(bytes)}\n`;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function ed25519Verify(publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean> {
  const key = await crypto.subtle.importKey('raw', publicKey as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, [
    'verify',
  ]);
  return crypto.subtle.verify(
    { name: 'Ed25519' },
    key,
    signature as Uint8Array<ArrayBuffer>,
    message as Uint8Array<ArrayBuffer>,
  );
}

/** The message a tlog-cosignature/v1 signs: a header line, the time, then the checkpoint body. */
export function cosignedMessage(checkpointText: string, timestamp: bigint): Uint8Array {
  return encoder.encode(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`);
}

/**
 * Whether the note carries a valid signature by this key (matched by name and key id; another
 * key's lines are ignored, as the spec says).
 */
export async function noteSignedBy(note: Note, key: VerifierKey): Promise<boolean> {
  for (const line of note.signatures) {
    if (line.name !== key.name || !sameBytes(line.id, key.id)) continue;
    if (key.alg === ED25519_ALG) {
      if (
        line.signature.length === 64 &&
        (await ed25519Verify(key.publicKey, line.signature, encoder.encode(note.text)))
      ) {
        return true;
      }
    } else if (line.signature.length === 72) {
      const view = new DataView(line.signature.buffer, line.signature.byteOffset, 8);
      const message = cosignedMessage(note.text, view.getBigUint64(0));
      if (await ed25519Verify(key.publicKey, line.signature.slice(8), message)) return true;
    }
  }
  return false;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** Extension lines after the root, if any. */
  extensions: string[];
}

export function checkpointText(origin: string, size: number, root: Uint8Array): string {
  return `${origin}\n${size}\n${toBase64(root)}\n`;
}

export function parseCheckpoint(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines.at(-1) !== '') throw new Error('a checkpoint is origin, size and root hash lines');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin.length === 0) throw new Error('the checkpoint has no origin');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new Error('the checkpoint size is not a decimal number');
  }
  const root = fromBase64(rootText);
  if (root.length !== 32) throw new Error('the checkpoint root is not a SHA-256 hash');
  return { origin, size: Number(sizeText), root, extensions: lines.slice(3, -1) };
}
