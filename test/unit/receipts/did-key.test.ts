import { describe, expect, it } from 'vitest';
import { didKeyFromPublicKey, publicKeyFromDidKey } from '../../../src/receipts/index.js';
import { vectors } from './vectors.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(bytes: number[]): string {
  // Independent, test-only encoder so that malformed payloads can be wrapped as did:key.
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  for (; n > 0n; n /= 58n) out = BASE58[Number(n % 58n)] + out;
  const zeros = bytes.findIndex((b) => b !== 0);
  return '1'.repeat(zeros < 0 ? bytes.length : zeros) + out;
}

describe('did:key', () => {
  it('round-trips keys with leading zero bytes', () => {
    for (const raw of [new Uint8Array(32), Uint8Array.from({ length: 32 }, (_, i) => (i < 3 ? 0 : i))]) {
      const did = didKeyFromPublicKey(raw);
      expect(did.startsWith('did:key:z6Mk')).toBe(true);
      expect(publicKeyFromDidKey(did)).toEqual(raw);
    }
  });

  it('refuses keys that are not 32 bytes when encoding', () => {
    expect(() => didKeyFromPublicKey(new Uint8Array(31))).toThrow(/32 bytes/);
  });

  it.each([
    ['a different DID method', 'did:web:example.com'],
    ['a non-base58btc multibase', `did:key:m${vectors.did_key.did.slice(9)}`],
    ['an empty key', 'did:key:z'],
    ['a character outside base58', `${vectors.did_key.did.slice(0, -1)}0`],
    ['another multicodec (secp256k1)', `did:key:z${base58([0xe7, 0x01, ...new Array(33).fill(2)])}`],
    ['a short Ed25519 key', `did:key:z${base58([0xed, 0x01, ...new Array(31).fill(2)])}`],
    ['a long Ed25519 key', `did:key:z${base58([0xed, 0x01, ...new Array(33).fill(2)])}`],
  ])('refuses %s', (_name, did) => {
    expect(() => publicKeyFromDidKey(did)).toThrow();
  });
});
