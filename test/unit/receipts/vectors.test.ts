import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildMerkleRoot,
  canonicalJson,
  decodeCompact,
  didKeyFromPublicKey,
  jwkThumbprint,
  nextAuditHash,
  publicKeyFromDidKey,
  rawPublicKey,
  receiptHash,
  receiptHeader,
  signCompact,
  signingKeyFromSeed,
  verifyCompactReceipt,
} from '../../../src/receipts/index.js';
import { seedBytes, vectors } from './vectors.js';

const roomKey = signingKeyFromSeed(seedBytes(vectors.keys.room.seed_hex));
const minimalKey = signingKeyFromSeed(seedBytes(vectors.keys.minimal.seed_hex));

function payloadText(jws: string): string {
  return Buffer.from(jws.split('.')[1] as string, 'base64url').toString('utf8');
}

describe('receipts.json: keys', () => {
  it.each([
    ['room', vectors.keys.room],
    ['minimal', vectors.keys.minimal],
  ])('derives the %s public key and RFC 7638 thumbprint from the seed', (_name, vector) => {
    const key = signingKeyFromSeed(seedBytes(vector.seed_hex));
    expect(key.jwk.x).toBe(vector.public_x);
    expect(key.kid).toBe(vector.kid_rfc7638);
    expect(key.jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      alg: 'EdDSA',
      use: 'sig',
      kid: vector.kid_rfc7638,
      x: vector.public_x,
    });
    expect(jwkThumbprint(vector.public_x)).toBe(vector.kid_rfc7638);
  });
});

describe('receipts.json: header_canonical', () => {
  it('is the JCS form of the receipt header', () => {
    expect(canonicalJson(receiptHeader(vectors.keys.room.kid_used_in_chain))).toBe(vectors.header_canonical);
  });

  it('is the exact first segment of every chain receipt', () => {
    for (const link of vectors.chain) {
      expect(Buffer.from(link.jws.split('.')[0] as string, 'base64url').toString('utf8')).toBe(
        vectors.header_canonical,
      );
    }
  });
});

describe('receipts.json: chain', () => {
  it('has three links', () => {
    expect(vectors.chain.map((l) => l.sequence)).toEqual([1, 2, 3]);
  });

  it.each(vectors.chain.map((link) => [link.sequence, link] as const))('link %i verifies', (_seq, link) => {
    const { header, payload } = verifyCompactReceipt(link.jws, roomKey.publicKey, link.receipt_hash);
    expect(header.kid).toBe(vectors.keys.room.kid_used_in_chain);
    expect((payload.svc as { sequence: number }).sequence).toBe(link.sequence);
    // The same key given as a JWK verifies too.
    verifyCompactReceipt(link.jws, roomKey.jwk, link.receipt_hash);
  });

  it.each(vectors.chain.map((link) => [link.sequence, link] as const))(
    'link %i payload is JCS-canonical',
    (_s, link) => {
      const text = payloadText(link.jws);
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    },
  );

  it.each(vectors.chain.map((link) => [link.sequence, link] as const))(
    'link %i hash is over the exact JWS',
    (_s, link) => {
      expect(receiptHash(link.jws)).toBe(link.receipt_hash);
    },
  );

  it('links each prev_hash to the previous receipt_hash', () => {
    let previous: string | null = null;
    for (const link of vectors.chain) {
      const svc = decodeCompact(link.jws).payload.svc as { prev_hash: string | null };
      expect(svc.prev_hash).toBe(previous);
      previous = link.receipt_hash;
    }
  });

  it.each(vectors.chain.map((link) => [link.sequence, link] as const))(
    're-signing link %i reproduces it',
    (_s, link) => {
      const { header, payload } = decodeCompact(link.jws);
      expect(signCompact(header, payload, roomKey)).toBe(link.jws);
    },
  );

  it('verifies with plain node:crypto against the published x', () => {
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: vectors.keys.room.public_x },
      format: 'jwk',
    });
    for (const link of vectors.chain) {
      const [h, p, s] = link.jws.split('.') as [string, string, string];
      expect(verify(null, Buffer.from(`${h}.${p}`, 'ascii'), publicKey, Buffer.from(s, 'base64url'))).toBe(true);
    }
  });
});

describe('receipts.json: minimal', () => {
  const { jws, payload_canonical, receipt_hash } = vectors.minimal;

  it('verifies and hashes', () => {
    const { header, payload } = verifyCompactReceipt(jws, minimalKey.publicKey, receipt_hash);
    expect(header.kid).toBe(vectors.keys.minimal.kid_used_in_jws);
    expect(canonicalJson(payload)).toBe(payload_canonical);
    expect(payloadText(jws)).toBe(payload_canonical);
    expect(receiptHash(jws)).toBe(receipt_hash);
  });

  it('is reproduced by the signer', () => {
    const header = receiptHeader(vectors.keys.minimal.kid_used_in_jws);
    expect(signCompact(header, JSON.parse(payload_canonical), minimalKey)).toBe(jws);
    // Member order of the inputs does not matter: both are canonicalised before signing.
    expect(signCompact({ typ: header.typ, kid: header.kid, alg: 'EdDSA' }, { b: 2, a: 1 }, minimalKey)).toBe(jws);
  });
});

describe('receipts.json: did_key', () => {
  const { seed_hex, public_x, did } = vectors.did_key;
  const raw = rawPublicKey(signingKeyFromSeed(seedBytes(seed_hex)).publicKey);

  it('derives the public key from the seed', () => {
    expect(Buffer.from(raw).toString('base64url')).toBe(public_x);
  });

  it('encodes the did:key', () => {
    expect(didKeyFromPublicKey(raw)).toBe(did);
  });

  it('decodes the did:key back to the key', () => {
    expect(Buffer.from(publicKeyFromDidKey(did)).toString('base64url')).toBe(public_x);
  });
});

describe('receipts.json: jcs_example', () => {
  // Hand-built from `input_js`.
  const input = { b: 2, a: [1, 1.5, -0, 1e21, 1e-7, 0.1 + 0.2], é: '\u001f"\\/', c: null, d: true };

  it('canonicalises to the expected text', () => {
    expect(canonicalJson(input)).toBe(vectors.jcs_example.output);
  });

  it('the hand-built object matches the vector source', () => {
    const fromSource: unknown = new Function(`return (${vectors.jcs_example.input_js});`)();
    expect(Object.is((fromSource as { a: number[] }).a[2], -0)).toBe(true);
    expect(fromSource).toEqual(input);
  });
});

describe('receipts.json: merkle', () => {
  it.each(Object.entries(vectors.merkle))('%s', (_name, { leaves, root }) => {
    expect(buildMerkleRoot(leaves)).toBe(root);
    expect(buildMerkleRoot(leaves.map((l) => l.toUpperCase()))).toBe(root);
  });
});

describe('receipts.json: audit_next_hash', () => {
  it.each(Object.entries(vectors.audit_next_hash))('%s', (_name, step) => {
    // `prev` names an earlier step whose hash is the previous link.
    const prev = step.prev === null ? null : (vectors.audit_next_hash[step.prev]?.hash ?? step.prev);
    expect(nextAuditHash(prev, step.body, step.ts)).toBe(step.hash);
  });
});
