/**
 * The embedded store's SQL (docs/architecture.md, Storage): the prepared statements, the rows they
 * read, and SQLite's errors in the port's vocabulary.
 */
import Database from 'better-sqlite3';
import {
  type ArchivedDecision,
  type IdempotencyRecord,
  type RoomRecord,
  StoreConflictError,
  type StoredEvent,
  type StoredReceipt,
  StoreUnavailableError,
} from './port.js';

export interface RoomRow {
  slug: string;
  version: number;
  head: number;
  chain_length: number;
  snapshot: string;
  next_deadline: number | null;
}

export interface EventRow {
  id: string;
  seq: number;
  event_type: string;
  occurred_at: string;
  decision_id: string | null;
  data: string;
  actor: string | null;
}

/** @internal The store's own statements: left out of the built declarations (tsconfig.build.json). */
export type SqlStatements = ReturnType<typeof prepareStatements>;

/** @internal */
export function prepareStatements(db: Database.Database) {
  return {
    reserveSlug: db.prepare<[string, number]>('INSERT OR IGNORE INTO slugs (slug, reserved_at) VALUES (?, ?)'),
    loadRoom: db.prepare<[string], RoomRow>(
      'SELECT slug, version, head, chain_length, snapshot, next_deadline FROM rooms WHERE slug = ?',
    ),
    /** What a commit checks and continues from: the snapshot it is about to replace is never read. */
    roomPosition: db.prepare<[string], Pick<RoomRow, 'version' | 'head' | 'chain_length'>>(
      'SELECT version, head, chain_length FROM rooms WHERE slug = ?',
    ),
    insertRoom: db.prepare<[string, number, number, string, number | null]>(
      'INSERT INTO rooms (slug, version, head, chain_length, snapshot, next_deadline) VALUES (?, 1, ?, ?, ?, ?)',
    ),
    updateRoom: db.prepare<[number, number, string, number | null, string, number]>(
      `UPDATE rooms SET version = version + 1, head = ?, chain_length = ?, snapshot = ?, next_deadline = ?
       WHERE slug = ? AND version = ?`,
    ),
    deleteRoom: db.prepare<[string]>('DELETE FROM rooms WHERE slug = ?'),
    insertEvent: db.prepare<[string, number, string, string, string, string | null, string, string | null]>(
      `INSERT INTO events (slug, seq, id, event_type, occurred_at, decision_id, data, actor)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    eventsAfter: db.prepare<[string, number, number], EventRow>(
      `SELECT id, seq, event_type, occurred_at, decision_id, data, actor FROM events
       WHERE slug = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    eventById: db.prepare<[string, string], EventRow>(
      'SELECT id, seq, event_type, occurred_at, decision_id, data, actor FROM events WHERE id = ? AND slug = ?',
    ),
    insertReceipt: db.prepare<[string, number, string | null, string, string]>(
      'INSERT INTO receipts (slug, sequence, decision_id, jws, receipt_hash) VALUES (?, ?, ?, ?, ?)',
    ),
    insertArchived: db.prepare<[string, number, string, string]>(
      'INSERT INTO archived_decisions (slug, seq, decision_id, data) VALUES (?, ?, ?, ?)',
    ),
    archived: db.prepare<[string, number], ArchivedDecision>(
      'SELECT decision_id, seq, data FROM archived_decisions WHERE slug = ? AND seq > ? ORDER BY seq',
    ),
    receipts: db.prepare<[string], StoredReceipt>(
      'SELECT sequence, decision_id, jws, receipt_hash FROM receipts WHERE slug = ? ORDER BY sequence',
    ),
    upsertIdempotency: db.prepare<[string, string, number, string, number]>(
      `INSERT INTO idempotency (scope, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (scope) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
         body = excluded.body, created_at = excluded.created_at`,
    ),
    idempotency: db.prepare<[string], IdempotencyRecord>(
      'SELECT scope, fingerprint, status, body, created_at FROM idempotency WHERE scope = ?',
    ),
    purgeIdempotency: db.prepare<[number]>('DELETE FROM idempotency WHERE created_at <= ?'),
    purgeUnsealed: db.prepare<[number, string]>('DELETE FROM idempotency WHERE substr(body, 1, ?) <> ?'),
    takeLock: db.prepare<[string, string, number, number]>(
      `INSERT INTO locks (slug, token, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (slug) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
       WHERE locks.expires_at <= ?`,
    ),
    lockHolder: db.prepare<[string], { token: string; expires_at: number }>(
      'SELECT token, expires_at FROM locks WHERE slug = ?',
    ),
    releaseLock: db.prepare<[string, string]>('DELETE FROM locks WHERE slug = ? AND token = ?'),
    renewLock: db.prepare<[number, string, string]>('UPDATE locks SET expires_at = ? WHERE slug = ? AND token = ?'),
    dueRooms: db.prepare<[number, number], { slug: string }>(
      `SELECT slug FROM rooms WHERE next_deadline IS NOT NULL AND next_deadline <= ?
       ORDER BY next_deadline, slug LIMIT ?`,
    ),
    nextDeadline: db.prepare<[], { next_deadline: number }>(
      'SELECT next_deadline FROM rooms WHERE next_deadline IS NOT NULL ORDER BY next_deadline LIMIT 1',
    ),
    ping: db.prepare('SELECT 1'),
    roomSlugs: db.prepare<[string, number], { slug: string }>(
      'SELECT slug FROM rooms WHERE slug > ? ORDER BY slug LIMIT ?',
    ),
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare<[string, string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    linkRoom: db.prepare<[string, string, number]>(
      `INSERT INTO room_links (key, slug, linked_at) VALUES (?, ?, ?)
       ON CONFLICT (key, slug) DO UPDATE SET linked_at = excluded.linked_at`,
    ),
    linkedRooms: db.prepare<[string, number], { slug: string }>(
      'SELECT slug FROM room_links WHERE key = ? ORDER BY linked_at DESC, slug LIMIT ?',
    ),
  };
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOLFS|AUTH|NOTADB|CORRUPT)/;

export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreConflictError || error instanceof StoreUnavailableError) return error;
  if (error instanceof Database.SqliteError) {
    // A duplicate key means the batch collides with stored rows, e.g. an event id used before.
    if (error.code.startsWith('SQLITE_CONSTRAINT')) return new StoreConflictError(error.message);
    if (UNAVAILABLE_CODES.test(error.code)) {
      return new StoreUnavailableError(`SQLite store unavailable: ${error.message}`, { cause: error });
    }
  }
  return error;
}

export function toRoomRecord(row: RoomRow): RoomRecord {
  return {
    slug: row.slug,
    version: row.version,
    head: row.head,
    snapshot: row.snapshot,
    next_deadline: row.next_deadline,
  };
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    seq: row.seq,
    event_type: row.event_type,
    occurred_at: row.occurred_at,
    decision_id: row.decision_id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    actor: row.actor,
  };
}
