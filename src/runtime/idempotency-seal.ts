/**
 * Sealed idempotent responses (docs/architecture.md, Credentials). A response kept for replay may
 * carry a credential the service shows once (creator_token, participant_token, invite_token), so
 * the stored body is encrypted (AES-256-GCM) under a key derived from what only the original client
 * holds: its Idempotency-Key, its credential (or client address when it presented none) and the
 * operation. The store keeps only the scope hash, an HMAC of the request fingerprint and the
 * ciphertext: reading the store (or a backup) yields no usable credential, and no server key sits
 * beside the data because none exists.
 *
 * A response that carries a credential is also bound to the client address: replayed from another
 * address it does not open, and the caller is refused (409 `idempotency.conflict`) instead of being
 * handed the credential or a second seat. Responses without a credential replay from anywhere.
 * The address is the client's group (auth/client-address.ts): an IPv6 client that moves to another
 * address of its /64 between a request and its retry still gets its answer. Records sealed before
 * that (bound to the exact address; kept 24 h at most) still open from that exact address.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { type ProtocolError, protocolError } from '../errors.js';
import { SEALED_BODY_PREFIX } from '../store/common.js';

/** Response fields whose value is a credential shown once; a response with one is address-bound. */
const CREDENTIAL_FIELDS = ['creator_token', 'participant_token', 'invite_token', 'signing_secret', 'access_token'];

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SealInputs {
  /** The Idempotency-Key exactly as the client sent it. */
  idempotencyKey: string;
  /** What the record is scoped by: the credential hash, or `ip:<address>` for anonymous callers. */
  credentialScope: string;
  /** HTTP method + concrete path, or MCP catalog + tool + slug. */
  operation: string;
  /** The client's address group (after TRUST_PROXY; auth/client-address.ts). */
  clientAddress: string;
  /**
   * The exact address, when it differs from its group (IPv6): records sealed before responses were
   * bound to the group were bound to it, and still open from it until they expire.
   */
  exactClientAddress?: string;
}

type Binding = 'key' | 'address';

/**
 * Seals and opens one scope's stored response. The derived keys live in private fields only, so an
 * instance that ends up in JSON (a log line, a stored record) serialises to `{}`.
 */
export class ResponseSeal {
  readonly #inputs: SealInputs;

  constructor(inputs: SealInputs) {
    this.#inputs = inputs;
  }

  /**
   * The stored form of a request fingerprint: an HMAC keyed like the seal, because the fingerprint
   * is the request body, which may hold a room password or an invite token.
   */
  fingerprint(text: string): string {
    return createHmac('sha256', this.#key('fingerprint')).update(text, 'utf8').digest('base64url');
  }

  /**
   * For records that keep their credential outside the seal (a webhook registration replays the
   * signing secret from the webhook itself): the keyed fingerprint plus a tag of the client address.
   */
  addressBoundFingerprint(fingerprint: string, address = this.#inputs.clientAddress): string {
    const tag = createHmac('sha256', this.#key('address', address)).update(fingerprint, 'utf8').digest('base64url');
    return `${fingerprint}.${tag}`;
  }

  /** Whether a stored address-bound fingerprint names this request from this address (its group, or the exact address it was bound to before). */
  compareBound(stored: string, fingerprint: string): 'same' | 'other_request' | 'other_address' {
    if (stored.split('.')[0] !== fingerprint) return 'other_request';
    const bound = this.#addresses().some((address) => stored === this.addressBoundFingerprint(fingerprint, address));
    return bound ? 'same' : 'other_address';
  }

  seal(body: string, result: unknown): string {
    const binding: Binding = carriesCredential(result) ? 'address' : 'key';
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key(binding), iv);
    const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url'));
    return `${SEALED_BODY_PREFIX}${binding === 'address' ? 'a' : 'k'}.${parts.join('.')}`;
  }

  /**
   * The response body, or null for a record written before sealing (never replayed; the start-up
   * purge removes them). Throws `idempotency.conflict` when an address-bound record is replayed from
   * another address.
   */
  open(stored: string): string | null {
    if (!isSealedBody(stored)) return null;
    const [mode, ivText, tagText, bodyText] = stored.slice(SEALED_BODY_PREFIX.length).split('.');
    const binding: Binding = mode === 'a' ? 'address' : 'key';
    // An address-bound record opens from the client's group, or from the exact address it was bound
    // to before groups (one of them at most opens it: the GCM tag decides).
    const addresses = binding === 'address' ? this.#addresses() : [this.#inputs.clientAddress];
    for (const address of addresses) {
      try {
        const decipher = createDecipheriv(
          'aes-256-gcm',
          this.#key(binding, address),
          Buffer.from(ivText ?? '', 'base64url'),
        );
        decipher.setAuthTag(Buffer.from(tagText ?? '', 'base64url').subarray(0, TAG_BYTES));
        return Buffer.concat([decipher.update(Buffer.from(bodyText ?? '', 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        // not this address: the next, or the refusal below
      }
    }
    throw binding === 'address' ? replayedElsewhere() : unreadableRecord();
  }

  /** The addresses a bound record may have been bound to: the group, then the exact address (records sealed before groups). */
  #addresses(): string[] {
    const { clientAddress, exactClientAddress } = this.#inputs;
    return exactClientAddress === undefined || exactClientAddress === clientAddress
      ? [clientAddress]
      : [clientAddress, exactClientAddress];
  }

  /** HKDF-SHA-256: the key material is the Idempotency-Key, salted with the credential scope. */
  #key(purpose: 'fingerprint' | Binding, address = this.#inputs.clientAddress): Buffer {
    const { idempotencyKey, credentialScope, operation } = this.#inputs;
    const salt = createHash('sha256').update(credentialScope, 'utf8').digest();
    const info = `conclave idempotency v1\n${purpose}\n${operation}${purpose === 'address' ? `\n${address}` : ''}`;
    return Buffer.from(hkdfSync('sha256', Buffer.from(idempotencyKey, 'utf8'), salt, Buffer.from(info, 'utf8'), 32));
  }
}

export function isSealedBody(stored: string): boolean {
  return stored.startsWith(SEALED_BODY_PREFIX);
}

function carriesCredential(result: unknown): boolean {
  if (typeof result !== 'object' || result === null) return false;
  const record = result as Record<string, unknown>;
  return CREDENTIAL_FIELDS.some((field) => typeof record[field] === 'string');
}

export function replayedElsewhere(): ProtocolError {
  return protocolError(
    'idempotency.conflict',
    'The stored result for this Idempotency-Key carries a credential and was issued to another client address; it is only replayed to the address that made the request. Use a new Idempotency-Key for a new request.',
    { hint: 'Generate a fresh Idempotency-Key for each distinct request.' },
  );
}

function unreadableRecord(): ProtocolError {
  return protocolError(
    'idempotency.conflict',
    'The stored result for this Idempotency-Key cannot be replayed for this request. Use a new Idempotency-Key for a new request.',
    { hint: 'Generate a fresh Idempotency-Key for each distinct request.' },
  );
}
