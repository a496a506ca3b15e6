/** The SQLite store's schema, as an ordered list of migrations applied once each. */
import type Database from 'better-sqlite3';
import { backfillOrder } from '../tlog/commit-order.js';
import { originOf } from './engagement-port.js';

/** Append only: a released migration is never edited, a change is a new entry. */
const MIGRATIONS: readonly (string | ((db: Database.Database, nowMs: number) => void))[] = [
  `
  CREATE TABLE slugs (
    slug        TEXT PRIMARY KEY,
    reserved_at INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE rooms (
    slug          TEXT PRIMARY KEY REFERENCES slugs (slug),
    version       INTEGER NOT NULL,
    head          INTEGER NOT NULL,
    chain_length  INTEGER NOT NULL,
    snapshot      TEXT NOT NULL,
    next_deadline INTEGER
  );
  CREATE INDEX rooms_next_deadline ON rooms (next_deadline, slug) WHERE next_deadline IS NOT NULL;

  CREATE TABLE events (
    slug        TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    id          TEXT NOT NULL UNIQUE,
    event_type  TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    decision_id TEXT,
    data        TEXT NOT NULL,
    actor       TEXT,
    PRIMARY KEY (slug, seq)
  ) WITHOUT ROWID;

  CREATE TABLE receipts (
    slug         TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    sequence     INTEGER NOT NULL,
    decision_id  TEXT,
    jws          TEXT NOT NULL,
    receipt_hash TEXT NOT NULL,
    PRIMARY KEY (slug, sequence)
  ) WITHOUT ROWID;

  CREATE TABLE idempotency (
    scope       TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status      INTEGER NOT NULL,
    body        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
  );
  CREATE INDEX idempotency_created_at ON idempotency (created_at);

  CREATE TABLE locks (
    slug       TEXT PRIMARY KEY,
    token      TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE opener_wakes (
    slug           TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    participant_id TEXT NOT NULL,
    decision_id    TEXT NOT NULL,
    PRIMARY KEY (slug, participant_id, decision_id)
  ) WITHOUT ROWID;

  CREATE TABLE webhooks (
    id                      TEXT PRIMARY KEY,
    slug                    TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    owner                   TEXT NOT NULL,
    url                     TEXT NOT NULL,
    event_types             TEXT NOT NULL,
    secret                  TEXT NOT NULL,
    created_at              INTEGER NOT NULL,
    disabled_at             INTEGER,
    cursor                  INTEGER NOT NULL,
    failure_streak          INTEGER NOT NULL,
    idempotency_scope       TEXT,
    idempotency_fingerprint TEXT
  );
  CREATE INDEX webhooks_slug ON webhooks (slug, created_at);

  CREATE TABLE deliveries (
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    slug            TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER,
    PRIMARY KEY (webhook_id, event_id)
  ) WITHOUT ROWID;
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
  `,
  `
  CREATE TABLE room_links (
    key       TEXT NOT NULL,
    slug      TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    linked_at INTEGER NOT NULL,
    PRIMARY KEY (key, slug)
  ) WITHOUT ROWID;
  CREATE INDEX room_links_recent ON room_links (key, linked_at DESC);
  `,
  // 4: resolved decisions leave the room snapshot for append-only storage.
  `
  CREATE TABLE archived_decisions (
    slug        TEXT NOT NULL REFERENCES rooms (slug) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    decision_id TEXT NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (slug, seq)
  ) WITHOUT ROWID;
  `,
  // 5: service-wide settings recorded by the runtime.
  `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 6: the transparency log (docs/transparency-log.md). Every receipt row inserted from now on is
  // queued by the trigger in the commit's own transaction; the receipts already stored are queued
  // here, in the same transaction that creates the trigger, so none is missed or queued twice.
  (db) => {
    db.exec(`
    CREATE TABLE tlog_queue (
      id           INTEGER PRIMARY KEY AUTOINCREMENT,
      slug         TEXT NOT NULL,
      sequence     INTEGER NOT NULL,
      jws          TEXT NOT NULL,
      receipt_hash TEXT NOT NULL
    );
    CREATE TRIGGER tlog_enqueue AFTER INSERT ON receipts BEGIN
      INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash)
      VALUES (NEW.slug, NEW.sequence, NEW.jws, NEW.receipt_hash);
    END;
    CREATE TABLE tlog_entries (
      idx          INTEGER PRIMARY KEY,
      jws          TEXT NOT NULL,
      receipt_hash TEXT NOT NULL
    );
    CREATE INDEX tlog_entries_hash ON tlog_entries (receipt_hash);
    CREATE TABLE tlog_tiles (
      level  INTEGER NOT NULL,
      idx    INTEGER NOT NULL,
      hashes BLOB NOT NULL,
      PRIMARY KEY (level, idx)
    ) WITHOUT ROWID;
    CREATE TABLE tlog_checkpoints (
      size INTEGER PRIMARY KEY,
      note TEXT NOT NULL
    );
    CREATE TABLE tlog_cosignatures (
      size    INTEGER NOT NULL,
      witness TEXT NOT NULL,
      line    TEXT NOT NULL,
      PRIMARY KEY (size, witness)
    ) WITHOUT ROWID;
    CREATE TABLE tlog_rooms (
      slug   TEXT PRIMARY KEY,
      logged INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE tlog_state (
      id        INTEGER PRIMARY KEY CHECK (id = 1),
      size      INTEGER NOT NULL,
      published INTEGER NOT NULL
    );
    INSERT INTO tlog_state (id, size, published) VALUES (1, 0, 0);
    `);
    const stored = db
      .prepare<[], { slug: string; sequence: number; jws: string; receipt_hash: string }>(
        'SELECT slug, sequence, jws, receipt_hash FROM receipts',
      )
      .all();
    const enqueue = db.prepare<[string, number, string, string]>(
      'INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash) VALUES (?, ?, ?, ?)',
    );
    for (const r of backfillOrder(stored)) enqueue.run(r.slug, r.sequence, r.jws, r.receipt_hash);
  },
  // 7: the live commitment log (docs/transparency-log.md, Stored format). The log of migration 6
  // becomes the frozen v1 log: its tables are left exactly as they are and nothing writes them
  // again. The live log keeps the same layout under `tlog_v2_*` and consumes the same queue
  // (`tlog_queue`, still filled by the trigger). It is back-filled from the frozen log's entries by
  // the first integrator, not here: its leaves carry VRF labels, and the key they derive from is
  // the service's, which a migration does not hold.
  `
  CREATE TABLE tlog_v2_entries (
    idx          INTEGER PRIMARY KEY,
    leaf         TEXT NOT NULL,
    receipt_hash TEXT NOT NULL
  );
  CREATE INDEX tlog_v2_entries_hash ON tlog_v2_entries (receipt_hash);
  CREATE TABLE tlog_v2_tiles (
    level  INTEGER NOT NULL,
    idx    INTEGER NOT NULL,
    hashes BLOB NOT NULL,
    PRIMARY KEY (level, idx)
  ) WITHOUT ROWID;
  CREATE TABLE tlog_v2_checkpoints (
    size INTEGER PRIMARY KEY,
    note TEXT NOT NULL
  );
  CREATE TABLE tlog_v2_cosignatures (
    size    INTEGER NOT NULL,
    witness TEXT NOT NULL,
    line    TEXT NOT NULL,
    PRIMARY KEY (size, witness)
  ) WITHOUT ROWID;
  CREATE TABLE tlog_v2_rooms (
    slug   TEXT PRIMARY KEY,
    logged INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE tlog_v2_state (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    size      INTEGER NOT NULL,
    published INTEGER NOT NULL
  );
  INSERT INTO tlog_v2_state (id, size, published) VALUES (1, 0, 0);
  `,
  // 8: webhook consent (docs/agents.md, Webhooks). A subscription is verified by its receiver before
  // room events go to it: those stored before have verified_at NULL and are verified once, like new
  // ones (a receiver written to the protocol answers 2xx and goes on as before). Disablings get a
  // reason (an old one inferred from the failure streak), deliveries a settle time so that settled rows
  // can be removed (those already settled count as settled now), and subscriptions their URL's origin
  // for the service-wide per-origin limit.
  (db, nowMs) => {
    db.exec(`
    ALTER TABLE webhooks ADD COLUMN verified_at INTEGER;
    ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT;
    ALTER TABLE webhooks ADD COLUMN refusal_streak INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE webhooks ADD COLUMN origin TEXT NOT NULL DEFAULT '';
    ALTER TABLE deliveries ADD COLUMN settled_at INTEGER;
    UPDATE webhooks SET disabled_reason = CASE WHEN failure_streak >= 3 THEN 'exhausted' ELSE 'unregistered' END
      WHERE disabled_at IS NOT NULL;
    CREATE INDEX webhooks_active_origin ON webhooks (origin) WHERE disabled_at IS NULL;
    CREATE INDEX deliveries_settled ON deliveries (settled_at) WHERE status != 'pending';
    `);
    db.prepare<[number]>("UPDATE deliveries SET settled_at = ? WHERE status != 'pending'").run(nowMs);
    const hooks = db.prepare<[], { id: string; url: string }>('SELECT id, url FROM webhooks').all();
    const setOrigin = db.prepare<[string, string]>('UPDATE webhooks SET origin = ? WHERE id = ?');
    for (const hook of hooks) setOrigin.run(originOf(hook.url), hook.id);
  },
  // 9: who registered a subscription (a hash of the client's address group), for the per-address share
  // of an origin (docs/agents.md, Webhooks: limits). Existing subscriptions have none.
  `ALTER TABLE webhooks ADD COLUMN client TEXT;`,
];

/**
 * Brings the schema up to date. Safe to run from several processes at once: each step re-reads
 * the applied version inside its own IMMEDIATE transaction, so a migration runs exactly once.
 */
export function migrate(db: Database.Database, nowMs: number): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    applied_at INTEGER NOT NULL
  )`);
  const current = db.prepare<[], { v: number | null }>('SELECT MAX(version) AS v FROM schema_version');
  const record = db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
  MIGRATIONS.forEach((sql, index) => {
    const version = index + 1;
    db.transaction(() => {
      if ((current.get()?.v ?? 0) >= version) return;
      if (typeof sql === 'string') db.exec(sql);
      else sql(db, nowMs);
      record.run(version, nowMs);
    }).immediate();
  });
}
