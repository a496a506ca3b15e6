/**
 * The log's note key: an Ed25519 key derived from the service's receipt signing key, so the log
 * needs no key of its own to manage and every replica sharing the signing key signs checkpoints
 * alike. Derived (SHA-256 over a label and the seed), not reused: the receipt key never signs a
 * second message format.
 */
import { createHash, sign } from 'node:crypto';
import { rawPublicKey, type SigningKey, seedOf, signingKeyFromSeed } from '../receipts/keys.js';
import { checkpointText, ED25519_ALG, formatSignatureLine, keyId, verifierKeyString } from './note.js';

const DERIVATION_LABEL = 'conclave transparency log note key v1\n';

export class NoteSigner {
  private readonly key: SigningKey;
  readonly publicKey: Uint8Array;
  /** The note key id (first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)), as signature lines carry it. */
  readonly id: Uint8Array;

  constructor(
    /** The key name, which is also the log's origin line. */
    readonly name: string,
    receiptKey: SigningKey,
  ) {
    const seed = createHash('sha256').update(DERIVATION_LABEL).update(seedOf(receiptKey)).digest();
    this.key = signingKeyFromSeed(seed);
    this.publicKey = rawPublicKey(this.key.publicKey);
    this.id = keyId(name, ED25519_ALG, this.publicKey);
  }

  /** `<name>+<hex key id>+<base64(0x01 ‖ key)>`, as verifiers configure it. */
  get verifierKey(): string {
    return verifierKeyString(this.name, this.publicKey);
  }

  /** A signed checkpoint note. Ed25519 is deterministic: one size and root always give the same bytes. */
  signCheckpoint(size: number, root: Uint8Array): string {
    const text = checkpointText(this.name, size, root);
    const signature = sign(null, Buffer.from(text, 'utf8'), this.key.privateKey);
    return `${text}\n${formatSignatureLine(this.name, this.id, signature)}`;
  }
}

/** A service's base URL without its scheme or trailing slash: the start of its log origins. */
function hostPart(baseUrl: string): string {
  return baseUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
}

/**
 * The origin line (and note key name) of a service's live commitment log: its base URL without
 * the scheme, plus `/log/v2`. A second tree may never reuse an origin, and `<host>/log` is the
 * frozen v1 log's (frozenLogOrigin).
 */
export function logOrigin(baseUrl: string): string {
  return `${hostPart(baseUrl)}/log/v2`;
}

/** The origin of the frozen v1 log, whose leaves were whole receipts: the base URL without the scheme, plus `/log`. */
export function frozenLogOrigin(baseUrl: string): string {
  return `${hostPart(baseUrl)}/log`;
}
