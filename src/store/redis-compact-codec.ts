/**
 * A concluded room's history in one value (docs/architecture.md, Storage, "Compact rooms"): the
 * snapshot, the events, the receipts and the archived decisions as the expanded keys hold them,
 * brotli-compressed together. Every item is kept as the exact text the expanded layout stores, so a
 * read answers the same bytes from either layout; only the receipts' JWS are stored decoded (their
 * base64url hides the JSON's repetitions from the compressor) and encoded again on the way out,
 * and only where that gives back the very same text.
 */
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

export interface ExpandedRoom {
  snapshot: string;
  /** The events zset's members (JSON texts), in seq order. */
  events: string[];
  /** The receipts list's items (JSON texts), in chain order. */
  receipts: string[];
  /** The archived decisions: seq and the entry's JSON text. */
  archived: { seq: number; json: string }[];
}

/** The first byte of a compact value: its format. */
const FORMAT_1 = 1;
/**
 * Quality 9 with a 64 KiB window: measured on a typical concluded room (10 members, 5 decisions, 45
 * messages; 97 KB of text), 9.5 KB in about 5 ms, where quality 11 takes 100 ms for 8.3 KB, which
 * Redis's allocator rounds to the same 10 KiB size class, and deflate at level 9 gives 11.2 KB.
 */
const BROTLI = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 9,
    [constants.BROTLI_PARAM_LGWIN]: 16,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
};

/** A receipt item with its JWS stored decoded: [item with an empty jws, header JSON, payload JSON, signature]. */
type CompactReceipt = string | [string, string, string, string];

export function encodeCompactRoom(room: ExpandedRoom): Buffer {
  const body = {
    snapshot: room.snapshot,
    events: room.events,
    receipts: room.receipts.map(compactReceipt),
    archived: room.archived.map((a) => [a.seq, a.json]),
  };
  const packed = brotliCompressSync(Buffer.from(JSON.stringify(body)), BROTLI);
  return Buffer.concat([Buffer.from([FORMAT_1]), packed]);
}

export function decodeCompactRoom(value: Buffer): ExpandedRoom {
  if (value[0] !== FORMAT_1) throw new Error(`unknown compact room format ${value[0]}`);
  const body = JSON.parse(brotliDecompressSync(value.subarray(1)).toString('utf8')) as {
    snapshot: string;
    events: string[];
    receipts: CompactReceipt[];
    archived: [number, string][];
  };
  return {
    snapshot: body.snapshot,
    events: body.events,
    receipts: body.receipts.map(expandReceipt),
    archived: body.archived.map(([seq, json]) => ({ seq, json })),
  };
}

function compactReceipt(item: string): CompactReceipt {
  const { jws } = JSON.parse(item) as { jws?: unknown };
  if (typeof jws !== 'string') return item;
  const parts = jws.split('.');
  const marker = `"jws":${JSON.stringify(jws)}`;
  if (parts.length !== 3 || item.indexOf(marker) !== item.lastIndexOf(marker)) return item;
  const [header, payload, signature] = parts as [string, string, string];
  const decoded: CompactReceipt = [
    item.replace(marker, '"jws":""'),
    Buffer.from(header, 'base64url').toString('utf8'),
    Buffer.from(payload, 'base64url').toString('utf8'),
    signature,
  ];
  // Kept decoded only when encoding it again gives back the very same text.
  return expandReceipt(decoded) === item ? decoded : item;
}

function expandReceipt(stored: CompactReceipt): string {
  if (typeof stored === 'string') return stored;
  const [item, header, payload, signature] = stored;
  const jws = `${Buffer.from(header, 'utf8').toString('base64url')}.${Buffer.from(payload, 'utf8').toString('base64url')}.${signature}`;
  return item.replace('"jws":""', () => `"jws":${JSON.stringify(jws)}`);
}
