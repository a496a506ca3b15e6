import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildConclusionReceiptPayload,
  loadKeyring,
  signReceipt,
  verifyCompactReceipt,
} from '../../../src/receipts/index.js';
import { conclusionInput } from './fixtures.js';
import { vectors } from './vectors.js';

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'conclave-keys-'));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const kids = (doc: { keys: Array<{ kid: string }> }) => doc.keys.map((k) => k.kid);

describe('loadKeyring without a data dir', () => {
  it('generates an in-memory key that signs verifiable receipts', async () => {
    const ring = await loadKeyring();
    const { jws } = signReceipt(buildConclusionReceiptPayload(conclusionInput()), ring.current);
    expect(() => verifyCompactReceipt(jws, ring.jwks().keys[0]!)).not.toThrow();
    expect(ring.all).toEqual([ring.current]);
    expect(ring.byKid(ring.current.kid)).toBe(ring.current);
    expect(ring.byKid('unknown')).toBeUndefined();
  });
});

describe('loadKeyring with a data dir', () => {
  it('persists the generated key (0600, no temp files) and reloads the same kid', async () => {
    const first = await loadKeyring({ dataDir });
    const files = await readdir(join(dataDir, 'keys'));
    expect(files).toEqual([`${first.current.kid}.json`]);
    expect((await stat(join(dataDir, 'keys', files[0] as string))).mode & 0o777).toBe(0o600);

    const second = await loadKeyring({ dataDir });
    expect(second.current.kid).toBe(first.current.kid);
    expect(second.current.jwk).toEqual(first.current.jwk);
  });

  it('rotation switches signing and keeps every old key published, across restarts', async () => {
    const ring = await loadKeyring({ dataDir });
    const oldKid = ring.current.kid;
    const rotated = await ring.rotate();
    expect(ring.current.kid).toBe(rotated.kid);
    expect(rotated.kid).not.toBe(oldKid);
    expect(kids(ring.jwks())).toEqual([rotated.kid, oldKid]);

    const reloaded = await loadKeyring({ dataDir });
    expect(reloaded.current.kid).toBe(rotated.kid);
    expect(kids(reloaded.jwks())).toEqual([rotated.kid, oldKid]);
    expect(reloaded.byKid(oldKid)?.jwk.kid).toBe(oldKid);
  });

  it('refuses a corrupt key file instead of silently replacing the key', async () => {
    const ring = await loadKeyring({ dataDir });
    const file = join(dataDir, 'keys', `${ring.current.kid}.json`);
    const record = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...record, x: vectors.keys.room.public_x }));
    await expect(loadKeyring({ dataDir })).rejects.toThrow(/does not match/);
    await writeFile(file, '{not json');
    await expect(loadKeyring({ dataDir })).rejects.toThrow(/not valid JSON/);
  });
});

describe('loadKeyring with a configured seed', () => {
  const seedHex = vectors.keys.room.seed_hex;
  const seedKid = vectors.keys.room.kid_rfc7638;

  it('signs with the seed key', async () => {
    const ring = await loadKeyring({ seedHex });
    expect(ring.current.kid).toBe(seedKid);
    expect(ring.current.jwk.x).toBe(vectors.keys.room.public_x);
  });

  it('keeps older stored keys published, and records the seed key without its secret', async () => {
    const generated = await loadKeyring({ dataDir });
    const ring = await loadKeyring({ dataDir, seedHex });
    expect(ring.current.kid).toBe(seedKid);
    expect(kids(ring.jwks())).toEqual([seedKid, generated.current.kid]);

    const record = JSON.parse(await readFile(join(dataDir, 'keys', `${seedKid}.json`), 'utf8'));
    expect(record).toMatchObject({ kid: seedKid, x: vectors.keys.room.public_x, origin: 'configured' });
    expect(record).not.toHaveProperty('d');

    // Once the seed is removed, its key stays published (verify-only) next to the generated one.
    const after = await loadKeyring({ dataDir });
    expect(after.current.kid).toBe(generated.current.kid);
    expect(kids(after.jwks()).sort()).toEqual([seedKid, generated.current.kid].sort());
    expect(after.byKid(seedKid)).not.toHaveProperty('privateKey');
    expect(after.all.map((k) => k.kid)).toEqual([generated.current.kid]);
  });

  it('does not duplicate the seed key across restarts', async () => {
    await loadKeyring({ dataDir, seedHex });
    const ring = await loadKeyring({ dataDir, seedHex });
    expect(kids(ring.jwks())).toEqual([seedKid]);
    expect(await readdir(join(dataDir, 'keys'))).toHaveLength(1);
  });

  it('refuses rotation while pinned and malformed seeds', async () => {
    const ring = await loadKeyring({ seedHex });
    await expect(ring.rotate()).rejects.toThrow(/CONCLAVE_SIGNING_KEY_SEED/);
    await expect(loadKeyring({ seedHex: 'abc' })).rejects.toThrow(/64 hex/);
    await expect(loadKeyring({ seedHex: `${seedHex}00` })).rejects.toThrow(/64 hex/);
  });
});
