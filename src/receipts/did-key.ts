/** `did:key` of Ed25519 keys: multibase `z` (base58btc, @scure/base's Bitcoin alphabet) of the multicodec key. */
import { base58 } from '@scure/base';

const PREFIX = 'did:key:z';
// Multicodec varint for ed25519-pub.
const ED25519_PUB = [0xed, 0x01] as const;

/** `did:key` of a raw 32-byte Ed25519 public key (docs/concepts.md, Mandates). */
export function didKeyFromPublicKey(raw32: Uint8Array): string {
  if (raw32.length !== 32) throw new Error(`Ed25519 public key must be 32 bytes, got ${raw32.length}`);
  return PREFIX + base58.encode(Uint8Array.from([...ED25519_PUB, ...raw32]));
}

/** The raw 32-byte Ed25519 public key inside a `did:key` (docs/concepts.md, Mandates). */
export function publicKeyFromDidKey(did: string): Uint8Array {
  if (typeof did !== 'string' || !did.startsWith(PREFIX)) throw new Error('not a base58btc did:key');
  const bytes = base58btcDecode(did.slice(PREFIX.length));
  if (bytes[0] !== ED25519_PUB[0] || bytes[1] !== ED25519_PUB[1]) {
    throw new Error('did:key is not an Ed25519 key (multicodec prefix 0xed 0x01)');
  }
  if (bytes.length !== 34) throw new Error(`did:key Ed25519 key must be 32 bytes, got ${bytes.length - 2}`);
  return bytes.slice(2);
}

function base58btcDecode(text: string): Uint8Array {
  if (text === '') throw new Error('empty base58btc value');
  try {
    return base58.decode(text);
  } catch (error) {
    throw new Error(`invalid base58btc value: ${(error as Error).message}`);
  }
}
