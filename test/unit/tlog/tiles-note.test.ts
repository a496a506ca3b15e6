/** Tile paths, entry bundles, signed notes and checkpoints (C2SP tlog-tiles, signed-note, tlog-checkpoint). */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { verifyCheckpoint } from '../../../src/client/tlog.js';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';
import { emptyRoot } from '../../../src/tlog/merkle.js';
import { keyId, parseVerifierKey, toBase64 } from '../../../src/tlog/note.js';
import { frozenLogOrigin, logOrigin, NoteSigner } from '../../../src/tlog/note-signer.js';
import {
  decodeEntryBundle,
  encodeEntryBundle,
  encodeTileIndex,
  parseTilePath,
  tilePath,
} from '../../../src/tlog/tiles.js';

describe('tile paths', () => {
  it('encode N in groups of three digits, x-prefixed but the last', () => {
    expect(encodeTileIndex(0)).toBe('000');
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 'entries', index: 5, width: 7 })).toBe('tile/entries/005.p/7');
  });

  it('parse only canonical paths', () => {
    expect(parseTilePath('tile/0/x001/x234/067')).toEqual({ level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('tile/2/000.p/255')).toEqual({ level: 2, index: 0, width: 255 });
    expect(parseTilePath('tile/entries/x001/000.p/1')).toEqual({ level: 'entries', index: 1000, width: 1 });
    for (const bad of [
      'tile/0/1',
      'tile/0/x000/001',
      'tile/00/000',
      'tile/0/000.p/0',
      'tile/0/000.p/256',
      'tile/0/000.p/07',
      'tile/x/000',
      'tile/0',
      'tile/64/000',
      'tile/0/001/002',
    ]) {
      expect([bad, parseTilePath(bad)]).toEqual([bad, null]);
    }
  });
});

describe('entry bundles', () => {
  it('round-trip, with uint16 lengths and the long-entry escape', () => {
    const entries = [new Uint8Array(0), new Uint8Array([1, 2, 3]), new Uint8Array(70_000).fill(7)];
    const bundle = encodeEntryBundle(entries);
    expect(Array.from(bundle.subarray(0, 5))).toEqual([0, 0, 0, 3, 1]);
    expect(decodeEntryBundle(bundle)).toEqual(entries);
    expect(() => decodeEntryBundle(bundle.subarray(0, bundle.length - 1))).toThrow(/truncated/);
  });
});

describe('signed checkpoints', () => {
  const signer = new NoteSigner('example.test/log', signingKeyFromSeed(new Uint8Array(32).fill(9)));

  it('use the C2SP key id: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4]', () => {
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from('example.test/log\n'), Buffer.from([1]), Buffer.from(signer.publicKey)]))
      .digest()
      .subarray(0, 4);
    expect(Buffer.from(keyId('example.test/log', 1, signer.publicKey)).equals(expected)).toBe(true);
    expect(signer.verifierKey).toBe(
      `example.test/log+${expected.toString('hex')}+${Buffer.concat([Buffer.from([1]), Buffer.from(signer.publicKey)]).toString('base64')}`,
    );
    expect(parseVerifierKey(signer.verifierKey).name).toBe('example.test/log');
  });

  it('sign deterministically and verify; any change fails', async () => {
    const root = new Uint8Array(32).fill(3);
    const note = signer.signCheckpoint(5, root);
    expect(note).toBe(signer.signCheckpoint(5, root));
    expect(note.startsWith(`example.test/log\n5\n${toBase64(root)}\n\n\u2014 example.test/log `)).toBe(true);
    expect(await verifyCheckpoint(note, signer.verifierKey)).toMatchObject({ size: 5, root: toBase64(root) });
    await expect(verifyCheckpoint(note.replace('\n5\n', '\n6\n'), signer.verifierKey)).rejects.toThrow(/signature/);
    const other = new NoteSigner('example.test/log', signingKeyFromSeed(new Uint8Array(32).fill(8)));
    await expect(verifyCheckpoint(note, other.verifierKey)).rejects.toThrow(/signature/);
    await expect(verifyCheckpoint('garbage', signer.verifierKey)).rejects.toThrow();
  });

  it('derive the origin from the base URL', () => {
    // The live commitment log; the frozen v1 log keeps the old origin (a second tree never reuses one).
    expect(logOrigin('https://conclave.example/')).toBe('conclave.example/log/v2');
    expect(logOrigin('http://127.0.0.1:8080')).toBe('127.0.0.1:8080/log/v2');
    expect(frozenLogOrigin('https://conclave.example/')).toBe('conclave.example/log');
    expect(frozenLogOrigin('http://127.0.0.1:8080')).toBe('127.0.0.1:8080/log');
  });
});

describe("the test instance's note key in docs/transparency-log.md", () => {
  it('is what a service with seed 07…07 at http://127.0.0.1:3000 derives and signs with', async () => {
    const docs = await readFile(new URL('../../../docs/transparency-log.md', import.meta.url), 'utf8');
    const blocks = [...docs.matchAll(/```\n([\s\S]*?)```/g)].map((match) => match[1] as string);
    const documentedKey = blocks.find((block) => block.startsWith('127.0.0.1:3000/log/v2+'))?.trim();
    const documentedNote = blocks.find((block) => block.startsWith('127.0.0.1:3000/log/v2\n0\n'));
    const signer = new NoteSigner(logOrigin('http://127.0.0.1:3000'), signingKeyFromSeed(new Uint8Array(32).fill(7)));
    expect(signer.verifierKey).toBe(documentedKey);
    expect(signer.signCheckpoint(0, emptyRoot())).toBe(documentedNote);
    expect((await verifyCheckpoint(documentedNote ?? '', documentedKey ?? '')).size).toBe(0);
  });
});
