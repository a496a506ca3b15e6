/**
 * The transparency log's storage (docs/transparency-log.md), beside the rooms in the same store.
 * Receipts reach the log through a queue written with (SQLite: in the same transaction as) the
 * room commit; one integrator at a time, holding the log lease (`LOG_LEASE_SLUG` in the store's
 * room-lock table), appends them as leaves with every tile they complete, then publishes the
 * signed checkpoint. Tiles, entries and published checkpoints only grow; nothing is rewritten.
 *
 * A store holds two logs: the live commitment log (`RoomStore.tlog`), which the integrator grows,
 * and the frozen v1 log (`RoomStore.frozenTlog`) written before leaves became commitments, whose
 * leaves are whole receipts. The frozen one is only read: its checkpoints, tiles and proofs stay
 * served, and the live log is back-filled from its entries once.
 */

/** The store lock that makes an integrator the only one. Not a valid room slug, so no room takes it. */
export const LOG_LEASE_SLUG = '~log';

/** A receipt waiting to be sequenced, in commit order. */
export interface QueuedReceipt {
  slug: string;
  sequence: number;
  jws: string;
  receipt_hash: string;
}

/** One leaf as stored: its exact data (ASCII) and the receipt it commits to, by which it is found. */
export interface LogEntry {
  data: string;
  receipt_hash: string;
}

export interface LogState {
  /** Leaves stored. Ahead of `published` only between an append and its publication. */
  size: number;
  /** The size of the latest published checkpoint (0 before the first). */
  published: number;
  /** The latest published checkpoint note, or null before the first. */
  checkpoint: string | null;
}

export interface LogAppend {
  /** The stored size the integrator built on; the append fails unless the log is still there. */
  expected_size: number;
  /** The new entries (each leaf's exact data), in leaf order. */
  leaves: LogEntry[];
  /** Per tile level L, the new hashes of tree level 8·L (each 32 bytes), from hash index `from` on. */
  tiles: { level: number; from: number; hashes: Uint8Array }[];
  /** How many receipts at the head of the queue this append consumed (sequenced or skipped). */
  consumed: number;
  /** Each room's count of logged receipts after this append (only rooms that changed). */
  rooms: Record<string, number>;
  /** The lease token the integrator holds. */
  fence: string;
}

export interface LogStore {
  state(): Promise<LogState>;
  /** The first `limit` receipts in the queue, oldest first. */
  queued(limit: number): Promise<QueuedReceipt[]>;
  /** How many of each room's receipts are in the log. */
  loggedCounts(): Promise<Map<string, number>>;
  /** Rooms whose chain is longer than their logged count: receipts the queue missed (Redis). */
  roomsBehind(counts: Map<string, number>): Promise<string[]>;
  /** Atomic: entries, tiles, room counts, queue consumption, size. StoreConflictError when fenced out or moved. */
  append(batch: LogAppend): Promise<void>;
  /**
   * Records the signed checkpoint of `size` (= the stored size) as published. Refuses a second,
   * different note for a size already published: two checkpoints of one size never differ.
   */
  publish(size: number, note: string, fence: string): Promise<void>;
  /** Sizes of published checkpoints above `after`, ascending, at most `limit`. */
  checkpointSizes(after: number, limit: number): Promise<number[]>;
  /** The published checkpoint of exactly this size, or null. */
  checkpointAt(size: number): Promise<string | null>;
  /** Records a witness's cosignature line on the published checkpoint of `size` (one per witness, the latest kept). */
  addCosignature(size: number, witness: string, line: string): Promise<void>;
  /** The cosignature lines recorded for the checkpoint of `size`, by witness name. */
  cosignatures(size: number): Promise<string[]>;
  /** `count` hashes of tree level 8·level from hash index `from` (fewer if fewer are stored). */
  tileHashes(level: number, from: number, count: number): Promise<Uint8Array>;
  /** `count` entries (each leaf's data) from leaf index `from`. */
  entries(from: number, count: number): Promise<string[]>;
  /** The leaf index of a receipt by its receipt_hash, or null when it is not (yet) in the log. */
  indexOf(receiptHash: string): Promise<number | null>;

  // Moving the log to another store (log-transfer.ts). A new log table or key is carried by adding
  // a LogPart kind here and handling it in both stores' export and import.

  /**
   * Everything the log stores, read in parts of at most `chunk` items, the state last. Writes
   * nothing. The shared queue is the live log's part: the frozen log's export carries none.
   */
  exportLog(chunk: number): AsyncIterable<LogPart>;
  /**
   * Starts writing an exported log into this store. The caller holds the log lease (`fence`); the
   * imported log becomes this store's log only at LogImport.finish, which refuses (StoreConflictError)
   * when this store holds a log of its own by then.
   */
  importLog(fence: string): Promise<LogImport>;
}

/** One part of an exported log: entries, index, tiles, checkpoints, rooms, queue, then the state. */
export type LogPart =
  /** Leaves from leaf index `from` on, in leaf order: each entry exactly as stored. */
  | { kind: 'entries'; from: number; entries: string[] }
  /** The receipt-hash index: which leaf holds the receipt of each hash (any order). */
  | { kind: 'index'; leaves: [receipt_hash: string, leaf: number][] }
  /** Hashes of tree level 8·level from hash index `from` on (32 bytes each). */
  | { kind: 'tiles'; level: number; from: number; hashes: Uint8Array }
  /** Published checkpoints in ascending size, each with its witness cosignature lines. */
  | {
      kind: 'checkpoints';
      checkpoints: { size: number; note: string; cosignatures: { witness: string; line: string }[] }[];
    }
  /** Logged receipts per room. */
  | { kind: 'rooms'; rooms: [slug: string, logged: number][] }
  /** Receipts waiting to be sequenced, oldest first (the queue's order is the log's order to come). */
  | { kind: 'queue'; receipts: QueuedReceipt[] }
  /** The stored and the published size: the last part. */
  | { kind: 'state'; size: number; published: number };

export interface LogImport {
  /** Writes one exported part; parts come in the order exportLog yields them. */
  write(part: LogPart): Promise<void>;
  /**
   * Makes the imported log this store's log, at once: entries, tiles, checkpoints, cosignatures,
   * room counts, receipt-hash index and state, and the queue, which replaces the store's own (a
   * room copied beside the log queues receipts that are already logged or in the imported queue).
   */
  finish(): Promise<void>;
  /** Drops whatever this import wrote. */
  abandon(): Promise<void>;
}

/** The reads of a log: what every process serves, and all there is of the frozen v1 log. */
export type LogReader = Pick<
  LogStore,
  'state' | 'loggedCounts' | 'checkpointSizes' | 'checkpointAt' | 'cosignatures' | 'tileHashes' | 'entries' | 'indexOf'
>;

/**
 * The frozen v1 log: nothing writes it any more, but a store move carries it (its checkpoints stay
 * served on the new store) through the same export and import as the live log, without the queue.
 */
export type FrozenLogStore = LogReader & Pick<LogStore, 'exportLog' | 'importLog'>;
