const PREFIX = 'did:key:z';
// Multicodec varint for ed25519-pub.
const ED25519_PUB = [0xed, 0x01] as const;
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** `did:key` of a raw 32-byte Ed25519 public key (docs/concepts.md, Mandates). */
export function didKeyFromPublicKey(raw32: Uint8Array): string {
  if (raw32.length !== 32) throw new Error(`Ed25519 public key must be 32 bytes, got ${raw32.length}`);
  return PREFIX + base58btcEncode(Uint8Array.from([...ED25519_PUB, ...raw32]));
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

function base58btcEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let digits = '';
  while (n > 0n) {
    digits = BASE58[Number(n % 58n)] + digits;
    n /= 58n;
  }
  return '1'.repeat(zeros) + digits;
}

function base58btcDecode(text: string): Uint8Array {
  if (text === '') throw new Error('empty base58btc value');
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  let n = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) throw new Error(`invalid base58btc character ${JSON.stringify(char)}`);
    n = n * 58n + BigInt(digit);
  }
  const body: number[] = [];
  while (n > 0n) {
    body.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body]);
}
