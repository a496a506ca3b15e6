/**
 * LogStore on the SQLite store's connection. Two logs share the layout (sqlite-schema.ts): the
 * frozen v1 log in the tables `tlog_*` (migration 6; its entries are whole receipts, column `jws`)
 * and the live commitment log in `tlog_v2_*` (migration 7; column `leaf`). Both read the one queue,
 * `tlog_queue`, filled by the trigger on `receipts`; only the live log consumes it.
 */
import type Database from 'better-sqlite3';
import { StoreConflictError } from './port.js';
import { exportSqliteLog, importSqliteLog } from './sqlite-tlog-transfer.js';
import {
  LOG_LEASE_SLUG,
  type LogAppend,
  type LogImport,
  type LogPart,
  type LogState,
  type LogStore,
  type QueuedReceipt,
} from './tlog-port.js';

const HASH = 32;
const TILE_HASHES = 256;

/** The table names of one log. Fixed strings from this module, never input. */
export interface LogTables {
  entries: string;
  /** The column of `entries` holding each leaf's data. */
  data: string;
  tiles: string;
  checkpoints: string;
  cosignatures: string;
  rooms: string;
  state: string;
  /** Whether this log consumes the shared queue `tlog_queue` (and so carries it when moved): the live one only. */
  queue: boolean;
}

/** The frozen v1 log (migration 6): leaves are whole receipt JWSs. */
export const FROZEN_LOG_TABLES: LogTables = {
  entries: 'tlog_entries',
  data: 'jws',
  tiles: 'tlog_tiles',
  checkpoints: 'tlog_checkpoints',
  cosignatures: 'tlog_cosignatures',
  rooms: 'tlog_rooms',
  state: 'tlog_state',
  queue: false,
};

/** The live commitment log (migration 7). */
export const LIVE_LOG_TABLES: LogTables = {
  entries: 'tlog_v2_entries',
  data: 'leaf',
  tiles: 'tlog_v2_tiles',
  checkpoints: 'tlog_v2_checkpoints',
  cosignatures: 'tlog_v2_cosignatures',
  rooms: 'tlog_v2_rooms',
  state: 'tlog_v2_state',
  queue: true,
};

function prepareStatements(db: Database.Database, t: LogTables) {
  return {
    state: db.prepare<[], { size: number; published: number }>(`SELECT size, published FROM ${t.state} WHERE id = 1`),
    setSize: db.prepare<[number]>(`UPDATE ${t.state} SET size = ? WHERE id = 1`),
    setPublished: db.prepare<[number]>(`UPDATE ${t.state} SET published = ? WHERE id = 1`),
    queued: db.prepare<[number], QueuedReceipt>(
      'SELECT slug, sequence, jws, receipt_hash FROM tlog_queue ORDER BY id LIMIT ?',
    ),
    consume: db.prepare<[number]>('DELETE FROM tlog_queue WHERE id IN (SELECT id FROM tlog_queue ORDER BY id LIMIT ?)'),
    rooms: db.prepare<[], { slug: string; logged: number }>(`SELECT slug, logged FROM ${t.rooms}`),
    setRoom: db.prepare<[string, number]>(
      `INSERT INTO ${t.rooms} (slug, logged) VALUES (?, ?) ON CONFLICT (slug) DO UPDATE SET logged = excluded.logged`,
    ),
    insertEntry: db.prepare<[number, string, string]>(
      `INSERT INTO ${t.entries} (idx, ${t.data}, receipt_hash) VALUES (?, ?, ?)`,
    ),
    entries: db.prepare<[number, number], { data: string }>(
      `SELECT ${t.data} AS data FROM ${t.entries} WHERE idx >= ? ORDER BY idx LIMIT ?`,
    ),
    indexOf: db.prepare<[string], { idx: number }>(`SELECT idx FROM ${t.entries} WHERE receipt_hash = ? LIMIT 1`),
    tile: db.prepare<[number, number], { hashes: Buffer }>(`SELECT hashes FROM ${t.tiles} WHERE level = ? AND idx = ?`),
    setTile: db.prepare<[number, number, Buffer]>(
      `INSERT INTO ${t.tiles} (level, idx, hashes) VALUES (?, ?, ?) ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes`,
    ),
    checkpoint: db.prepare<[number], { note: string }>(`SELECT note FROM ${t.checkpoints} WHERE size = ?`),
    checkpointSizes: db.prepare<[number, number], { size: number }>(
      `SELECT size FROM ${t.checkpoints} WHERE size > ? ORDER BY size LIMIT ?`,
    ),
    insertCheckpoint: db.prepare<[number, string]>(`INSERT INTO ${t.checkpoints} (size, note) VALUES (?, ?)`),
    addCosignature: db.prepare<[number, string, string]>(
      `INSERT INTO ${t.cosignatures} (size, witness, line) VALUES (?, ?, ?)
       ON CONFLICT (size, witness) DO UPDATE SET line = excluded.line`,
    ),
    cosignatures: db.prepare<[number], { line: string }>(
      `SELECT line FROM ${t.cosignatures} WHERE size = ? ORDER BY witness`,
    ),
    lease: db.prepare<[string], { token: string; expires_at: number }>(
      'SELECT token, expires_at FROM locks WHERE slug = ?',
    ),
  };
}

export class SqliteLogStore implements LogStore {
  private readonly sql: ReturnType<typeof prepareStatements>;

  constructor(
    private readonly db: Database.Database,
    /** Runs a read (the store's error vocabulary). */
    private readonly run: <T>(work: () => T) => Promise<T>,
    /** Runs a write in the store's group commit. */
    private readonly grouped: <T>(work: () => T) => Promise<T>,
    private readonly tables: LogTables = LIVE_LOG_TABLES,
  ) {
    this.sql = prepareStatements(db, tables);
  }

  state(): Promise<LogState> {
    return this.run(() => this.readState());
  }

  queued(limit: number): Promise<QueuedReceipt[]> {
    return this.run(() => this.sql.queued.all(limit));
  }

  loggedCounts(): Promise<Map<string, number>> {
    return this.run(() => new Map(this.sql.rooms.all().map((row) => [row.slug, row.logged])));
  }

  /** The trigger queues every receipt in its commit's transaction: the queue misses none. */
  async roomsBehind(): Promise<string[]> {
    return [];
  }

  append(batch: LogAppend): Promise<void> {
    return this.grouped(() => {
      this.assertLease(batch.fence);
      const { size } = this.readState();
      if (size !== batch.expected_size) {
        throw new StoreConflictError(`the log has ${size} leaves, the append expected ${batch.expected_size}`);
      }
      batch.leaves.forEach((leaf, i) => {
        this.sql.insertEntry.run(size + i, leaf.data, leaf.receipt_hash);
      });
      for (const { level, from, hashes } of batch.tiles) this.appendHashes(level, from, hashes);
      for (const [slug, logged] of Object.entries(batch.rooms)) this.sql.setRoom.run(slug, logged);
      this.sql.consume.run(batch.consumed);
      this.sql.setSize.run(size + batch.leaves.length);
    });
  }

  publish(size: number, note: string, fence: string): Promise<void> {
    return this.grouped(() => {
      this.assertLease(fence);
      const state = this.readState();
      if (size !== state.size) throw new StoreConflictError(`the log has ${state.size} leaves, not ${size}`);
      const existing = this.sql.checkpoint.get(size)?.note;
      if (existing !== undefined && existing !== note) {
        throw new StoreConflictError(`a different checkpoint of size ${size} is already published`);
      }
      if (existing === undefined) this.sql.insertCheckpoint.run(size, note);
      if (size > state.published) this.sql.setPublished.run(size);
    });
  }

  checkpointSizes(after: number, limit: number): Promise<number[]> {
    return this.run(() => this.sql.checkpointSizes.all(after, limit).map((row) => row.size));
  }

  checkpointAt(size: number): Promise<string | null> {
    return this.run(() => this.sql.checkpoint.get(size)?.note ?? null);
  }

  addCosignature(size: number, witness: string, line: string): Promise<void> {
    return this.grouped(() => {
      this.sql.addCosignature.run(size, witness, line);
    });
  }

  cosignatures(size: number): Promise<string[]> {
    return this.run(() => this.sql.cosignatures.all(size).map((row) => row.line));
  }

  tileHashes(level: number, from: number, count: number): Promise<Uint8Array> {
    return this.run(() => {
      const parts: Buffer[] = [];
      let at = from;
      const end = from + count;
      while (at < end) {
        const tile = Math.floor(at / TILE_HASHES);
        const stored = this.sql.tile.get(level, tile)?.hashes;
        if (!stored) break;
        const offset = at - tile * TILE_HASHES;
        const take = Math.min(end - at, TILE_HASHES - offset, stored.length / HASH - offset);
        if (take <= 0) break;
        parts.push(stored.subarray(offset * HASH, (offset + take) * HASH));
        at += take;
        if (offset + take < TILE_HASHES) break;
      }
      return new Uint8Array(Buffer.concat(parts));
    });
  }

  entries(from: number, count: number): Promise<string[]> {
    return this.run(() => this.sql.entries.all(from, count).map((row) => row.data));
  }

  indexOf(receiptHash: string): Promise<number | null> {
    return this.run(() => this.sql.indexOf.get(receiptHash)?.idx ?? null);
  }

  // Moving the log to another store (LogPart in tlog-port.ts): sqlite-tlog-transfer.ts.

  exportLog(chunk: number): AsyncIterable<LogPart> {
    return exportSqliteLog(this.db, this.tables, this.run, chunk);
  }

  importLog(fence: string): Promise<LogImport> {
    return importSqliteLog(this.db, this.tables, this.grouped, (token) => this.assertLease(token), fence);
  }

  private readState(): LogState {
    const row = this.sql.state.get() ?? { size: 0, published: 0 };
    const checkpoint = this.sql.checkpoint.get(row.published)?.note ?? null;
    return { size: row.size, published: row.published, checkpoint };
  }

  /** Appends hashes to the stored tiles of one level, refusing anything but an exact continuation. */
  private appendHashes(level: number, from: number, hashes: Uint8Array): void {
    let at = from;
    let offset = 0;
    while (offset < hashes.length) {
      const tile = Math.floor(at / TILE_HASHES);
      const within = at - tile * TILE_HASHES;
      const stored = this.sql.tile.get(level, tile)?.hashes ?? Buffer.alloc(0);
      if (stored.length !== within * HASH) {
        throw new StoreConflictError(`tile ${level}/${tile} holds ${stored.length / HASH} hashes, not ${within}`);
      }
      const take = Math.min(TILE_HASHES - within, (hashes.length - offset) / HASH);
      const added = hashes.subarray(offset, offset + take * HASH);
      this.sql.setTile.run(level, tile, Buffer.concat([stored, added]));
      at += take;
      offset += take * HASH;
    }
  }

  private assertLease(token: string): void {
    const holder = this.sql.lease.get(LOG_LEASE_SLUG);
    if (!holder || holder.token !== token || holder.expires_at <= Date.now()) {
      throw new StoreConflictError('the log lease is no longer held');
    }
  }
}
