/**
 * C2SP tlog-tiles addressing and encodings: tile paths (`tile/<L>/<N>[.p/<W>]`, `tile/entries/…`),
 * hash tiles (concatenated 32-byte hashes of tree level 8·L) and entry bundles. Pure; shared with
 * the client and the CLI's mirror.
 */
import { HASH_SIZE, type Hash } from './merkle.js';

/** A full tile holds 256 hashes (tile height 8). */
export const TILE_WIDTH = 256;
export const TILE_HEIGHT = 8;

export interface TileAddress {
  /** Tile level, or 'entries' for an entry bundle. */
  level: number | 'entries';
  index: number;
  /** 1–256; 256 is a full tile. */
  width: number;
}

/** `<N>` as path elements: groups of three digits, all but the last prefixed with `x`. */
export function encodeTileIndex(index: number): string {
  let digits = String(index);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups = digits.match(/.{3}/g) as string[];
  return groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join('/');
}

export function tilePath(address: TileAddress): string {
  const base = `tile/${address.level}/${encodeTileIndex(address.index)}`;
  return address.width === TILE_WIDTH ? base : `${base}.p/${address.width}`;
}

const LEVEL = /^(0|[1-9][0-9]?)$/;
const INDEX_PART = /^x[0-9]{3}$/;
const LAST_PART = /^[0-9]{3}$/;
const WIDTH = /^([1-9][0-9]{0,2})$/;

/**
 * Parses the part of a URL after `/log/` (`tile/0/x001/234.p/5`). Strict: only the canonical form
 * is accepted, so every tile has exactly one URL (a cache keys on it). Null when it is not a tile.
 */
export function parseTilePath(path: string): TileAddress | null {
  const parts = path.split('/');
  if (parts[0] !== 'tile' || parts.length < 3) return null;
  const levelText = parts[1] as string;
  let level: number | 'entries';
  if (levelText === 'entries') level = 'entries';
  else if (LEVEL.test(levelText) && Number(levelText) < 64) level = Number(levelText);
  else return null;
  let rest = parts.slice(2);
  let width = TILE_WIDTH;
  const last = rest.at(-1) as string;
  if (rest.length >= 2 && (rest.at(-2) as string).endsWith('.p')) {
    if (!WIDTH.test(last) || Number(last) >= TILE_WIDTH) return null;
    width = Number(last);
    rest = [...rest.slice(0, -2), (rest.at(-2) as string).slice(0, -2)];
  }
  if (rest.length === 0 || rest.length > 6) return null;
  const final = rest.at(-1) as string;
  if (!LAST_PART.test(final) || !rest.slice(0, -1).every((part) => INDEX_PART.test(part))) return null;
  const digits = rest.map((part) => part.replace(/^x/, '')).join('');
  // The canonical form has no leading all-zero group.
  if (rest.length > 1 && digits.startsWith('000')) return null;
  const index = Number(digits);
  if (!Number.isSafeInteger(index)) return null;
  return { level, index, width };
}

export function concatHashes(hashes: readonly Hash[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_SIZE);
  hashes.forEach((hash, i) => {
    out.set(hash, i * HASH_SIZE);
  });
  return out;
}

export function splitHashes(tile: Uint8Array): Hash[] {
  if (tile.length % HASH_SIZE !== 0) throw new Error('a hash tile is a whole number of 32-byte hashes');
  const hashes: Hash[] = [];
  for (let at = 0; at < tile.length; at += HASH_SIZE) hashes.push(tile.slice(at, at + HASH_SIZE));
  return hashes;
}

/**
 * Marks an entry too long for the uint16 length (a receipt over 64 KiB): `0xFFFF` then a big-endian
 * uint32 length. Every entry shorter than 0xFFFF bytes is encoded exactly as C2SP tlog-tiles says.
 */
const LONG_ENTRY = 0xffff;

/** An entry bundle: each entry as a big-endian uint16 length and its bytes. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  const size = entries.reduce((sum, entry) => sum + entry.length + (entry.length >= LONG_ENTRY ? 6 : 2), 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const entry of entries) {
    if (entry.length >= LONG_ENTRY) {
      view.setUint16(at, LONG_ENTRY);
      view.setUint32(at + 2, entry.length);
      at += 6;
    } else {
      view.setUint16(at, entry.length);
      at += 2;
    }
    out.set(entry, at);
    at += entry.length;
  }
  return out;
}

export function decodeEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const view = new DataView(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new Error('truncated entry bundle');
    let length = view.getUint16(at);
    at += 2;
    if (length === LONG_ENTRY) {
      if (at + 4 > bundle.length) throw new Error('truncated entry bundle');
      length = view.getUint32(at);
      at += 4;
    }
    if (at + length > bundle.length) throw new Error('truncated entry bundle');
    entries.push(bundle.slice(at, at + length));
    at += length;
  }
  return entries;
}
