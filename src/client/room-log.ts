/**
 * A member's audit of its own room in the transparency log (docs/transparency-log.md, Verifying).
 * The log publishes only commitment leaves labelled by a VRF over (room, chain position), so nobody
 * outside the room can tell which leaves are the room's; a member, given the labels and their
 * proofs by the member endpoint (`GET /api/rooms/{slug}/log-positions`), can:
 *
 * - find every leaf of its room, and so prove each of its receipts is in the log;
 * - see a fork: one position label on two leaves with different commitments (the service logged
 *   two different receipts for one position of the chain — a split view shown to someone);
 * - see a receipt it was never shown: a leaf at the room's next, unused position;
 * - see a receipt of its own that the log does not hold (missing).
 *
 * `monitorRoomInLog` does this over entries the caller already has (a mirror, a test); `auditRoomLog`
 * fetches discovery, the positions, the room's receipts, the latest checkpoint and every entry
 * bundle, checks the entries are exactly the tree the checkpoint signs, and runs the same scan.
 * Browser-safe: global fetch, nothing server-only.
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import { hashesEqual, leafHash } from '../tlog/merkle.js';
import { fromBase64, toBase64 } from '../tlog/note.js';
import { signedPosition } from '../tlog/position.js';
import { parseReceiptLeaf, receiptCommitment } from '../tlog/receipt-leaf.js';
import { decodeEntryBundle, splitHashes, TILE_WIDTH, tilePath } from '../tlog/tiles.js';
import { MerkleTree } from '../tlog/tree.js';
import {
  LogVerificationError,
  type PositionKey,
  type PositionProof,
  positionKeysById,
  type VerifiedCheckpoint,
  verifyCheckpoint,
  verifyPositionProof,
} from './tlog.js';
import { type Auth, credentialHeaders, errorFrom } from './transport.js';

/** One position of the member endpoint's body. */
export interface LogPositionRow {
  sequence: number;
  /** `sha256:<hex>` of the receipt at this position; null for the next, unused position. */
  receipt_hash: string | null;
  /** Where the service says the receipt's leaf is; null until sequenced and published. */
  leaf_index: number | null;
  labels: PositionProof[];
}

/** The body of `GET /api/rooms/{slug}/log-positions`. */
export interface LogPositions {
  room_id: string;
  log_origin: string;
  positions: LogPositionRow[];
}

/** One leaf of the log: its index and its exact data bytes, as a mirror reads them. */
export interface LogEntry {
  index: number;
  data: Uint8Array;
}

export interface RoomLogReport {
  /** No fork, nothing missing, nothing unseen. */
  ok: boolean;
  room_id: string;
  /** How many leaves carry one of the room's position labels. */
  leaves_found: number;
  /** How many leaves were scanned. */
  tree_size: number;
  /** Every position (the unused one last) with the leaves found at it and their commitments (`sha256:<hex>`). */
  positions: { sequence: number; leaf_indexes: number[]; commitments: string[] }[];
  /** Positions whose label is on leaves with different commitments: two receipts for one position. */
  forks: { sequence: number; leaf_indexes: number[]; commitments: string[] }[];
  /** Receipts of the room (shown to this member) that the log does not hold at their position. */
  missing: { sequence: number; receipt_hash: string; reason: string }[];
  /** Leaves at the next, unused position: a receipt the member was never shown. */
  unseen: { sequence: number; leaf_indexes: number[] }[];
}

export interface MonitorInput {
  /** The member endpoint's body. */
  positions: LogPositions;
  /** Discovery's `audit_log.position_keys`. */
  positionKeys: readonly PositionKey[];
  /** Every leaf of the log (or of the prefix to check), in any order. */
  entries: Iterable<LogEntry> | AsyncIterable<LogEntry>;
  /** The room's receipts as this member was shown them (compact JWS), e.g. from `/outcome`. */
  receipts?: readonly string[];
}

const hashOf = (commitment: Uint8Array) => `sha256:${bytesToHex(commitment)}`;

/**
 * Scans the log's leaves for the room's position labels (every label's VRF proof checked first)
 * and reports forks, missing receipts and receipts never shown. Throws LogVerificationError
 * ('position') when the positions body itself cannot be trusted: a proof that does not verify, a
 * position key without a label, a gap in the sequences, receipts of another room.
 */
export async function monitorRoomInLog(input: MonitorInput): Promise<RoomLogReport> {
  const { positions: body } = input;
  const keys = positionKeysById(input.positionKeys);
  const rows = checkedRows(body);
  // label (key id + base64 label) → sequence, every label proven for this room and sequence.
  const sequenceOf = new Map<string, number>();
  for (const row of rows) {
    for (const label of row.labels) {
      const proven = verifyPositionProof(body.room_id, row.sequence, label, keys);
      sequenceOf.set(`${label.key_id} ${toBase64(proven)}`, row.sequence);
    }
    const keyed = new Set(row.labels.map((label) => label.key_id));
    for (const keyId of keys.keys()) {
      // A key without a label would hide a fork made under it.
      if (!keyed.has(keyId)) {
        throw new LogVerificationError('position', `sequence ${row.sequence} has no label under position key ${keyId}`);
      }
    }
  }

  // What this member expects at each position: the endpoint's receipt hash and the receipts it holds.
  const expected = new Map<number, Set<string>>();
  const missing: RoomLogReport['missing'] = [];
  const unused = rows.at(-1) as LogPositionRow;
  const expect = (sequence: number, hash: string) => {
    const set = expected.get(sequence) ?? new Set<string>();
    set.add(hash);
    expected.set(sequence, set);
  };
  for (const row of rows) if (row.receipt_hash !== null) expect(row.sequence, row.receipt_hash);
  for (const jws of input.receipts ?? []) {
    const signed = signedPosition(jws);
    if (!signed) throw new LogVerificationError('position', 'a receipt signs no svc.room_id and svc.sequence');
    if (signed.roomId !== body.room_id) {
      throw new LogVerificationError('position', `a receipt is of ${signed.roomId}, the positions of ${body.room_id}`);
    }
    const hash = hashOf(receiptCommitment(jws));
    if (signed.sequence >= unused.sequence) {
      missing.push({
        sequence: signed.sequence,
        receipt_hash: hash,
        reason: `the member endpoint says position ${unused.sequence} is still unused, so it gives no label for this receipt`,
      });
      continue;
    }
    expect(signed.sequence, hash);
  }

  // The scan: every leaf whose label is one of the room's.
  const found = new Map<number, { leaf_indexes: number[]; commitments: string[] }>(
    rows.map((row) => [row.sequence, { leaf_indexes: [], commitments: [] }]),
  );
  const commitmentAt = new Map<number, string>();
  let scanned = 0;
  let leavesFound = 0;
  for await (const entry of input.entries) {
    scanned = Math.max(scanned, entry.index + 1);
    const leaf = parseReceiptLeaf(entry.data);
    if (!leaf) continue;
    const sequence = sequenceOf.get(`${leaf.keyId} ${toBase64(leaf.label)}`);
    if (sequence === undefined) continue;
    const at = found.get(sequence) as { leaf_indexes: number[]; commitments: string[] };
    const commitment = hashOf(leaf.commitment);
    at.leaf_indexes.push(entry.index);
    if (!at.commitments.includes(commitment)) at.commitments.push(commitment);
    commitmentAt.set(entry.index, commitment);
    leavesFound++;
  }

  const report: RoomLogReport = {
    ok: false,
    room_id: body.room_id,
    leaves_found: leavesFound,
    tree_size: scanned,
    positions: rows.map((row) => {
      const at = found.get(row.sequence) as { leaf_indexes: number[]; commitments: string[] };
      return { sequence: row.sequence, leaf_indexes: sorted(at.leaf_indexes), commitments: at.commitments };
    }),
    forks: [],
    missing,
    unseen: [],
  };
  for (const position of report.positions) {
    if (position.commitments.length > 1) report.forks.push({ ...position });
  }
  const unusedAt = report.positions.at(-1) as RoomLogReport['positions'][number];
  if (unusedAt.leaf_indexes.length > 0) {
    report.unseen.push({ sequence: unusedAt.sequence, leaf_indexes: unusedAt.leaf_indexes });
  }
  for (const row of rows.slice(0, -1)) {
    const at = found.get(row.sequence) as { leaf_indexes: number[]; commitments: string[] };
    for (const hash of expected.get(row.sequence) ?? []) {
      if (!at.commitments.includes(hash)) {
        missing.push({
          sequence: row.sequence,
          receipt_hash: hash,
          reason:
            at.leaf_indexes.length === 0
              ? `no leaf of the log carries position ${row.sequence}'s label`
              : `the log holds another receipt at position ${row.sequence} (leaf ${at.leaf_indexes.join(', ')})`,
        });
      }
    }
    // The endpoint's own leaf index must be a leaf of this position holding its receipt.
    const claimed = row.leaf_index;
    if (
      claimed !== null &&
      claimed < scanned &&
      row.receipt_hash !== null &&
      at.commitments.includes(row.receipt_hash)
    ) {
      if (commitmentAt.get(claimed) !== row.receipt_hash) {
        missing.push({
          sequence: row.sequence,
          receipt_hash: row.receipt_hash,
          reason: `the member endpoint places it at leaf ${claimed}, which does not hold it`,
        });
      }
    }
  }
  missing.sort((a, b) => a.sequence - b.sequence);
  report.ok = report.forks.length === 0 && report.missing.length === 0 && report.unseen.length === 0;
  return report;
}

/** The rows, checked to be positions 1..n of the chain then the unused n+1 (and nothing else). */
function checkedRows(body: LogPositions): LogPositionRow[] {
  const rows = Array.isArray(body?.positions) ? body.positions : [];
  if (typeof body?.room_id !== 'string' || rows.length === 0) {
    throw new LogVerificationError('position', 'the member endpoint gave no positions');
  }
  rows.forEach((row, i) => {
    if (row.sequence !== i + 1) {
      throw new LogVerificationError(
        'position',
        `the positions skip or repeat: row ${i + 1} is sequence ${row.sequence}`,
      );
    }
    const last = i === rows.length - 1;
    if (last !== (row.receipt_hash === null)) {
      throw new LogVerificationError(
        'position',
        last
          ? 'the last position must be the unused one (receipt_hash null)'
          : `position ${row.sequence} has no receipt`,
      );
    }
    if (!Array.isArray(row.labels) || row.labels.length === 0) {
      throw new LogVerificationError('position', `position ${row.sequence} has no label`);
    }
  });
  return rows;
}

function sorted(numbers: number[]): number[] {
  return [...numbers].sort((a, b) => a - b);
}

// --- fetching --------------------------------------------------------------------------------

export interface AuditRoomLogOptions {
  /** The service's base URL (`https://host[/prefix]`). */
  baseUrl: string;
  slug: string;
  /** The member's credential: the same the client sends (`token`, `bearer`, `password`, …). */
  auth?: Auth;
  fetch?: typeof globalThis.fetch;
  /** Wait up to this long for the room's receipts to be published in the log (default 10 s). */
  waitMs?: number;
}

export interface RoomLogAudit extends RoomLogReport {
  /** The signed checkpoint whose tree was scanned (the entries were checked to be exactly that tree). */
  checkpoint: VerifiedCheckpoint;
  /** The room's receipts read from `/outcome`, by sequence: compact JWS and the row (`decisions[i]`, `conclusion`). */
  receipts: { sequence: number; jws: string; row: string }[];
}

type Json = Record<string, unknown>;

/**
 * The member's whole audit over HTTP: discovery (the log's note key and position keys), the
 * member endpoint, `/outcome`'s receipts, the latest checkpoint (signature checked, origin the
 * positions' own), and every entry bundle of its tree, whose leaves must hash to the checkpoint's
 * root — so every leaf found is proven in the signed tree, and none the service showed the scan
 * could be left out of it.
 */
export async function auditRoomLog(options: AuditRoomLogOptions): Promise<RoomLogAudit> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const get = options.fetch ?? globalThis.fetch.bind(globalThis);
  const headers = { accept: 'application/json', ...credentialHeaders(options.auth ?? {}) };
  const slug = encodeURIComponent(options.slug);
  const discovery = await getJson(get, `${base}/.well-known/svc.json`, {});
  const auditLog = discovery.audit_log as Json | undefined;
  if (typeof auditLog?.verifier_key !== 'string') {
    throw new LogVerificationError(
      'checkpoint',
      'the service publishes no transparency log (no audit_log in discovery)',
    );
  }
  const verifierKey = auditLog.verifier_key;
  const positionKeys = (Array.isArray(auditLog.position_keys) ? auditLog.position_keys : []) as PositionKey[];

  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (;;) {
    const positions = (await getJson(
      get,
      `${base}/api/rooms/${slug}/log-positions`,
      headers,
    )) as unknown as LogPositions;
    const outcome = await getJson(get, `${base}/api/rooms/${slug}/outcome`, headers);
    const checkpoint = await verifyCheckpoint(await getText(get, `${base}/log/checkpoint`), verifierKey);
    if (checkpoint.origin !== positions.log_origin) {
      throw new LogVerificationError(
        'checkpoint',
        `the positions are for log ${positions.log_origin}, the checkpoint is of ${checkpoint.origin}`,
      );
    }
    // Labels of another room would hide this one's leaves: the positions must be this room's.
    if (typeof positions.room_id !== 'string' || !positions.room_id.endsWith(`/r/${slug}`)) {
      throw new LogVerificationError(
        'position',
        `the positions are of ${positions.room_id}, not of room ${options.slug}`,
      );
    }
    const rows = Array.isArray(positions.positions) ? positions.positions : [];
    const pending = rows.some(
      (row) => row.receipt_hash !== null && (row.leaf_index === null || row.leaf_index >= checkpoint.size),
    );
    // Receipts enter the log within seconds of signing: wait for them rather than call them missing.
    if (pending && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    const receipts = outcomeReceipts(outcome);
    const entries: LogEntry[] = [];
    for await (const entry of fetchLogEntries(get, `${base}/log`, checkpoint)) entries.push(entry);
    const report = await monitorRoomInLog({
      positions,
      positionKeys,
      entries,
      receipts: receipts.map((r) => r.jws),
    });
    return { ...report, checkpoint, receipts };
  }
}

/**
 * Every leaf of a checkpoint's tree, from the log's entry bundles (C2SP tlog-tiles), checked on the
 * way: after the last bundle the leaves must hash to the checkpoint's signed root, or this throws.
 */
export async function* fetchLogEntries(
  get: typeof globalThis.fetch,
  logUrl: string,
  checkpoint: Pick<VerifiedCheckpoint, 'size' | 'root'>,
): AsyncGenerator<LogEntry> {
  const tree = new MerkleTree();
  for (let index = 0; index * TILE_WIDTH < checkpoint.size; index++) {
    const width = Math.min(TILE_WIDTH, checkpoint.size - index * TILE_WIDTH);
    const url = `${logUrl}/${tilePath({ level: 'entries', index, width })}`;
    const response = await get(url);
    if (response.status !== 200) {
      throw new LogVerificationError('inclusion', `GET ${url} answered ${response.status}`);
    }
    const bundle = decodeEntryBundle(new Uint8Array(await response.arrayBuffer()));
    // A full bundle may be served where a partial one was asked for: only the first `width` count.
    if (bundle.length < width) {
      throw new LogVerificationError('inclusion', `entry bundle ${index} holds ${bundle.length} leaves, not ${width}`);
    }
    for (let i = 0; i < width; i++) {
      const data = bundle[i] as Uint8Array;
      tree.append([leafHash(data)]);
      yield { index: index * TILE_WIDTH + i, data };
    }
  }
  if (!hashesEqual(tree.root(checkpoint.size), fromBase64(checkpoint.root))) {
    const leaf = await firstLeafOffTiles(get, logUrl, tree, checkpoint.size);
    throw new LogVerificationError(
      'inclusion',
      `${leaf === null ? 'the entries' : `leaf ${leaf}: the entry`} the log serves ${leaf === null ? 'are' : 'is'} not the tree its checkpoint of size ${checkpoint.size} signs`,
    );
  }
}

/**
 * Names the leaf whose entry disagrees with the log's own level-0 hash tiles (what its checkpoints
 * were computed from): the entry rewritten behind the tree. Null when the tiles agree with the
 * entries (then the tiles themselves are not the signed tree).
 */
async function firstLeafOffTiles(
  get: typeof globalThis.fetch,
  logUrl: string,
  tree: MerkleTree,
  size: number,
): Promise<number | null> {
  for (let index = 0; index * TILE_WIDTH < size; index++) {
    const width = Math.min(TILE_WIDTH, size - index * TILE_WIDTH);
    const response = await get(`${logUrl}/${tilePath({ level: 0, index, width })}`);
    if (response.status !== 200) return null;
    const tiled = splitHashes(new Uint8Array(await response.arrayBuffer()));
    const mine = tree.hashesAt(0, index * TILE_WIDTH, index * TILE_WIDTH + width);
    for (let i = 0; i < width; i++) {
      const theirs = tiled[i];
      if (!theirs || !hashesEqual(theirs, mine[i] as Uint8Array)) return index * TILE_WIDTH + i;
    }
  }
  return null;
}

function outcomeReceipts(outcome: Json): { sequence: number; jws: string; row: string }[] {
  const decisions = (Array.isArray(outcome.decisions) ? outcome.decisions : []) as Json[];
  const rows = [
    ...decisions.map((row, i) => ({ row: `decisions[${i}]`, body: row })),
    ...(outcome.conclusion ? [{ row: 'conclusion', body: outcome.conclusion as Json }] : []),
  ];
  return rows
    .filter(({ body }) => typeof body.receipt_jws === 'string')
    .map(({ row, body }) => {
      const jws = body.receipt_jws as string;
      return { sequence: signedPosition(jws)?.sequence ?? 0, jws, row };
    })
    .sort((a, b) => a.sequence - b.sequence);
}

/** A refusal is the service's own error (ConclaveError, with its envelope's code and message). */
async function getText(
  get: typeof globalThis.fetch,
  url: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await get(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw errorFrom(response, text);
  return text;
}

async function getJson(get: typeof globalThis.fetch, url: string, headers: Record<string, string>): Promise<Json> {
  return JSON.parse(await getText(get, url, headers)) as Json;
}
