/**
 * An outsider's crawl of a transparency log over plain GETs, as a generic C2SP tlog-tiles tool would
 * read it: every published checkpoint, every hash tile of the latest tree and every entry bundle —
 * and an independent check of what it read (RFC 6962 hashing recomputed here, not the service's
 * code): every leaf hash from the bundles, every tile level from the one below, every checkpoint's
 * signature and root, and every inclusion and consistency proof the log serves.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { verifyCheckpoint } from '../../src/client/tlog.js';
import { decodeEntryBundle, encodeTileIndex } from '../../src/tlog/tiles.js';

export interface CrawledLog {
  /** Every response body read, with its path (what an outsider learns is exactly these bytes). */
  bodies: { path: string; bytes: Uint8Array }[];
  /** Every leaf's data, in index order. */
  leaves: Uint8Array[];
  /** Every published checkpoint note, by size. */
  checkpoints: Map<number, string>;
  latest: { size: number; root: Uint8Array; note: string };
}

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
const leafHash = (data: Uint8Array) => sha256(Uint8Array.of(0), data);
const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const fromB64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

/** RFC 6962 MTH over leaf hashes (the split at the largest power of two below n). */
export function rootOf(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return sha256();
  if (hashes.length === 1) return hashes[0] as Uint8Array;
  let split = 1;
  while (split * 2 < hashes.length) split *= 2;
  return nodeHash(rootOf(hashes.slice(0, split)), rootOf(hashes.slice(split)));
}

/** RFC 9162 inclusion verification, written from the RFC. */
function inclusionRoot(index: number, size: number, leaf: Uint8Array, proof: Uint8Array[]): Uint8Array | null {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 consistency verification, written from the RFC. */
function consistent(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: Uint8Array[]) {
  if (first === second) return proof.length === 0 && b64(firstRoot) === b64(secondRoot);
  if (first === 0) return proof.length === 0;
  const path = [...proof];
  if ((first & (first - 1)) === 0) path.unshift(firstRoot);
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0] as Uint8Array;
  let sr = path[0] as Uint8Array;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && b64(fr) === b64(firstRoot) && b64(sr) === b64(secondRoot);
}

async function get(base: string, path: string): Promise<{ status: number; bytes: Uint8Array }> {
  const response = await fetch(`${base}${path}`);
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/**
 * Reads the whole log at `prefix` (`/log` or `/log/v1`) with no credential and checks it. With
 * `entries: false` (the frozen log, whose bundles are withheld) the leaves are not read.
 */
export async function crawlLog(
  base: string,
  verifierKey: string,
  options: { prefix?: string; entries?: boolean } = {},
): Promise<CrawledLog> {
  const prefix = options.prefix ?? '/log';
  const bodies: CrawledLog['bodies'] = [];
  const read = async (path: string) => {
    const answer = await get(base, path);
    expect([path, answer.status]).toEqual([path, 200]);
    bodies.push({ path, bytes: answer.bytes });
    return answer.bytes;
  };
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

  const latestNote = text(await read(`${prefix}/checkpoint`));
  const verified = await verifyCheckpoint(latestNote, verifierKey);
  const latest = { size: verified.size, root: fromB64(verified.root) };
  const checkpoints = new Map<number, string>();
  for (let after: number | null = -1; after !== null; ) {
    const page = JSON.parse(text(await read(`${prefix}/checkpoints${after < 0 ? '' : `?after=${after}`}`))) as {
      sizes: number[];
      next_after: number | null;
    };
    for (const size of page.sizes) checkpoints.set(size, text(await read(`${prefix}/checkpoint/${size}`)));
    after = page.next_after;
  }
  expect(checkpoints.has(latest.size)).toBe(true);

  // Every hash tile of the latest tree, level by level.
  const levels: Uint8Array[][] = [];
  for (let level = 0, width = latest.size; width > 0; level++, width = Math.floor(width / 256)) {
    const hashes: Uint8Array[] = [];
    for (let index = 0; index * 256 < width; index++) {
      const w = Math.min(256, width - index * 256);
      const tile = await read(`${prefix}/tile/${level}/${encodeTileIndex(index)}${w === 256 ? '' : `.p/${w}`}`);
      expect(tile.length).toBe(w * 32);
      for (let at = 0; at < tile.length; at += 32) hashes.push(tile.slice(at, at + 32));
    }
    levels.push(hashes);
    if (width < 256) break;
  }
  // Each level's hashes are the roots of 256-wide subtrees of the level below.
  for (let level = 1; level < levels.length; level++) {
    const below = levels[level - 1] as Uint8Array[];
    (levels[level] as Uint8Array[]).forEach((hash, i) => {
      expect(b64(rootOf(below.slice(i * 256, (i + 1) * 256)))).toBe(b64(hash));
    });
  }
  const leafHashes = levels[0] ?? [];
  expect(leafHashes.length).toBe(latest.size);

  // Every entry bundle: each leaf's hash recomputed from its data must be the tile's.
  const leaves: Uint8Array[] = [];
  if (options.entries !== false) {
    for (let index = 0; index * 256 < latest.size; index++) {
      const w = Math.min(256, latest.size - index * 256);
      const bundle = await read(`${prefix}/tile/entries/${encodeTileIndex(index)}${w === 256 ? '' : `.p/${w}`}`);
      leaves.push(...decodeEntryBundle(bundle));
    }
    expect(leaves.length).toBe(latest.size);
    leaves.forEach((leaf, i) => {
      expect([i, b64(leafHash(leaf))]).toEqual([i, b64(leafHashes[i] as Uint8Array)]);
    });
  }

  // Every checkpoint: its signature, and its root over the first `size` leaf hashes.
  for (const [size, note] of checkpoints) {
    const checkpoint = await verifyCheckpoint(note, verifierKey);
    expect(checkpoint.size).toBe(size);
    expect([size, checkpoint.root]).toEqual([size, b64(rootOf(leafHashes.slice(0, size)))]);
  }

  // Every leaf's inclusion proof, and a consistency proof from every checkpoint, against the latest.
  for (let index = 0; index < latest.size; index++) {
    const proof = JSON.parse(text(await read(`${prefix}/proof/inclusion?index=${index}&size=${latest.size}`))) as {
      inclusion_proof: string[];
    };
    const root = inclusionRoot(index, latest.size, leafHashes[index] as Uint8Array, proof.inclusion_proof.map(fromB64));
    expect([index, root && b64(root)]).toEqual([index, b64(latest.root)]);
  }
  for (const [size, note] of checkpoints) {
    const older = await verifyCheckpoint(note, verifierKey);
    const proof = JSON.parse(text(await read(`${prefix}/proof/consistency?first=${size}&second=${latest.size}`))) as {
      consistency_proof: string[];
    };
    const olderRoot = fromB64(older.root);
    expect([size, consistent(size, latest.size, olderRoot, latest.root, proof.consistency_proof.map(fromB64))]).toEqual(
      [size, true],
    );
  }
  return { bodies, leaves, checkpoints, latest: { size: latest.size, root: latest.root, note: latestNote } };
}

/**
 * The needles an outsider finds in these bytes: each looked for as is, and inside every base64url
 * or base64 run decoded (a JWS segment, a base64 line), so an encoded slug or question is found too.
 */
export function findNeedles(bodies: readonly { path: string; bytes: Uint8Array }[], needles: readonly string[]) {
  const found: { needle: string; path: string }[] = [];
  for (const { path, bytes } of bodies) {
    const raw = Buffer.from(bytes).toString('latin1');
    const texts = [raw];
    for (const run of raw.match(/[A-Za-z0-9_-]{12,}/g) ?? [])
      texts.push(Buffer.from(run, 'base64url').toString('latin1'));
    for (const run of raw.match(/[A-Za-z0-9+/]{12,}={0,2}/g) ?? [])
      texts.push(Buffer.from(run, 'base64').toString('latin1'));
    const haystack = texts.join('\n');
    for (const needle of needles) {
      if (haystack.includes(needle)) found.push({ needle, path });
    }
  }
  return found;
}
