/**
 * `conclave migrate --to redis`: copies an embedded store (a SQLite data directory) into Redis, so a
 * service that outgrew one machine starts its replicas on the rooms it has (docs/operations-backup.md).
 *
 * Per room, in slug order: the room (live state, events, receipts, archived decisions and its
 * unexpired replay records) lands in one commit as the room's first version, so a room is in Redis
 * whole or not at all; then its webhooks with their deliveries, its opener wakes and its credential
 * links, each written only where absent. Slugs of deleted rooms are reserved, so they are never
 * reused. A room already in Redis is compared with the source: the same content is left alone (a
 * second run, or a run resumed after an interruption, changes nothing), different content is a
 * conflict that is reported and never overwritten.
 *
 * The transparency logs are copied as they are, before any room (log-transfer.ts): the live
 * commitment log with the shared queue, and the frozen v1 log (its checkpoints and tiles stay served;
 * its entries are kept, never served). A Redis that holds another of either log is refused before
 * anything is written, and the log lease is held throughout, so no integrator sequences (or
 * back-fills) the copied rooms' receipts in an order of its own meanwhile. The source is read in one
 * read transaction: rooms and logs are one consistent view.
 *
 * Not copied: locks (held by processes of the old store), and replay records of requests not scoped
 * to a room (a room creation retried with its Idempotency-Key across the move creates a new room).
 * The signing keys stay in DATA_DIR/keys, which the Redis-backed service reads as before.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Revocation } from '../auth/identity-store.js';
import { RedisIdentityStore } from '../auth/identity-store-redis.js';
import { fromKeyRow, type KeyRow } from '../auth/identity-store-sqlite.js';
import { isIdempotencyExpired, slugOfScope } from './common.js';
import type { DeliveryRecord, WebhookRecord } from './engagement-port.js';
import { compareLogs, copyLog, holdsLog, type LogComparison, LogTransferRefused } from './log-transfer.js';
import type { ArchivedDecision, IdempotencyRecord, RoomLock, StoredEvent, StoredReceipt } from './port.js';
import { connectRedisClient, createRedisClient } from './redis-connection.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, openRedisStore, type RedisStore, type RedisStoreOptions } from './redis-store.js';
import { logKeys } from './redis-tlog.js';
import { type DeliveryRow, toDelivery, toWebhook, type WebhookRow } from './sqlite-engagement.js';
import { FROZEN_LOG_TABLES, LIVE_LOG_TABLES, SqliteLogStore } from './sqlite-tlog.js';
import { LOG_LEASE_SLUG } from './tlog-port.js';

export { LogTransferRefused };

export type RoomResult = 'created' | 'unchanged' | 'conflict' | 'reserved';

export interface MigrationReport {
  rooms: Record<RoomResult, number>;
  /** Slugs already in Redis with other content: left as they are. */
  conflicts: { slug: string; reason: string }[];
  webhooks: number;
  links: number;
  /** Hosted keys (device flow) and the service's mandate revocations copied. */
  identity: { hostedKeys: number; revocations: number };
  /**
   * The transparency log: `copied` (what it held), `unchanged` (Redis already holds exactly this
   * log: a second run), or `none` (a store from before the log, whose receipts the Redis service
   * back-fills as the SQLite one would have).
   */
  log: LogMove & { queued: number };
  /**
   * The frozen v1 log (leaves are whole receipts, from before the commitment log): `copied`,
   * `unchanged`, or `none` (a store created with the commitment log: its frozen log is empty).
   */
  frozenLog: LogMove;
}

interface LogMove {
  result: 'copied' | 'unchanged' | 'none';
  leaves: number;
  checkpoints: number;
  cosignatures: number;
}

interface SourceRoom {
  slug: string;
  head: number;
  snapshot: string;
  next_deadline: number | null;
  events: StoredEvent[];
  receipts: StoredReceipt[];
  archived: ArchivedDecision[];
  idempotency: IdempotencyRecord[];
}

export interface MigrateOptions {
  /** The SQLite data directory (its conclave.db). */
  dataDir: string;
  redis: RedisStoreOptions;
  /** Epoch ms: which replay records are still alive. */
  now?: () => number;
  /** Called after each slug, for progress output. */
  onRoom?: (slug: string, result: RoomResult) => void;
}

/** How long the migration's hold on the Redis log lease lasts unless renewed (it renews every third). */
const LOG_LEASE_MS = 60_000;

export async function migrateToRedis(options: MigrateOptions): Promise<MigrationReport> {
  const now = options.now ?? Date.now;
  const source = new SqliteSource(path.join(options.dataDir, 'conclave.db'));
  const store = await openRedisStore(options.redis);
  const report: MigrationReport = {
    rooms: { created: 0, unchanged: 0, conflict: 0, reserved: 0 },
    conflicts: [],
    webhooks: 0,
    links: 0,
    identity: { hostedKeys: 0, revocations: 0 },
    log: { result: 'none', leaves: 0, checkpoints: 0, cosignatures: 0, queued: 0 },
    frozenLog: { result: 'none', leaves: 0, checkpoints: 0, cosignatures: 0 },
  };
  let lease: HeldLease | null = null;
  try {
    // The logs first, before anything is written: a refusal leaves Redis as it was.
    const logs = source.logs();
    if (logs !== null) {
      lease = await HeldLease.take(store);
      const live = await compareLogs(logs.live, store.tlog, { source: logs.live, target: store.tlog });
      const frozen = await compareLogs(logs.frozen, store.frozenTlog);
      refuseOther(options.redis.keyPrefix, 'transparency log', live);
      refuseOther(options.redis.keyPrefix, 'frozen v1 transparency log', frozen);
      // Either log may be there already (a run that stopped between the two): each is copied once.
      if (frozen.kind === 'same') report.frozenLog.result = 'unchanged';
      else if (await holdsLog(logs.frozen, await logs.frozen.state())) {
        const { queued: _none, ...copied } = await copyLog(logs.frozen, store.frozenTlog, lease.token, {
          progress: () => lease!.keep(),
        });
        report.frozenLog = { result: 'copied', ...copied };
      }
      if (live.kind === 'absent') {
        const copied = await copyLog(logs.live, store.tlog, lease.token, { progress: () => lease!.keep() });
        report.log = { result: 'copied', ...copied };
      } else {
        report.log = { ...report.log, result: 'unchanged', queued: source.queueLength() };
      }
    }
    for (const [key, value] of source.meta()) {
      const held = await store.meta(key);
      if (held === null) await store.setMeta(key, value);
      else if (held !== value)
        report.conflicts.push({ slug: '-', reason: `service setting ${key} is ${held} in Redis, ${value} here` });
    }
    const queue = logs === null ? null : await CopiedQueue.open(options.redis, source.queueLength());
    try {
      for (const slug of source.slugs()) {
        await lease?.keep();
        const result = await migrateRoom(store, source, slug, now(), report);
        if (result === 'created') await queue?.settle();
        report.rooms[result]++;
        options.onRoom?.(slug, result);
      }
      await queue?.settle();
    } finally {
      queue?.close();
    }
    await migrateIdentity(options.redis, source, now(), report);
  } finally {
    await lease?.release();
    source.close();
    await store.close();
  }
  return report;
}

/** Refuses the run, before anything is written, when Redis holds another of this log. */
function refuseOther(keyPrefix: string | undefined, name: string, comparison: LogComparison): void {
  if (comparison.kind !== 'other') return;
  throw new LogTransferRefused(
    `Redis (key prefix ${keyPrefix ?? 'conclave:'}) already holds another ${name}: ${comparison.why}. ` +
      "Copying the rooms there would have their receipts logged again in another order, which every reader of this store's checkpoints would see as a fork. " +
      'Nothing was written: migrate into an empty Redis, or choose another --redis-key-prefix.',
  );
}

/**
 * The migration's hold on the Redis log lease (the integrator's, LOG_LEASE_SLUG): while it holds it,
 * no service on that Redis sequences anything, so the copied rooms' receipts are not logged in an
 * order of the integrator's own before the copied log and queue are in place.
 */
class HeldLease {
  private renewedAt = Date.now();

  private constructor(private readonly lock: RoomLock) {}

  static async take(store: RedisStore): Promise<HeldLease> {
    try {
      return new HeldLease(await store.lock(LOG_LEASE_SLUG, LOG_LEASE_MS, 0));
    } catch (error) {
      throw new LogTransferRefused(
        `could not take the transparency log's lease in Redis (${(error as Error).message}): a service running on this Redis holds it. Stop every service on it, then migrate again; nothing was written.`,
      );
    }
  }

  get token(): string {
    return this.lock.token;
  }

  async keep(): Promise<void> {
    if (Date.now() - this.renewedAt < LOG_LEASE_MS / 3) return;
    if (!(await this.lock.renew())) throw new Error('the migration lost the Redis log lease; run it again');
    this.renewedAt = Date.now();
  }

  release(): Promise<void> {
    return this.lock.release();
  }
}

/**
 * Creating a room in Redis queues its receipts for the log (the commit's follow-up). Every one of them
 * is already in the copied log or in the copied queue, so the queue is cut back to the copied one
 * after each room: its order stays the source's, and Redis never holds every receipt a second time.
 */
class CopiedQueue {
  private constructor(
    private readonly client: ReturnType<typeof createRedisClient>,
    private readonly key: string,
    private readonly length: number,
  ) {}

  static async open(options: RedisStoreOptions, length: number): Promise<CopiedQueue> {
    const client = createRedisClient(options.url, {
      cluster: options.cluster ?? false,
      commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      role: 'commands',
    });
    await connectRedisClient(client);
    return new CopiedQueue(client, logKeys(options.keyPrefix ?? 'conclave:').queue, length);
  }

  async settle(): Promise<void> {
    if (this.length === 0) await this.client.del(this.key);
    else await this.client.ltrim(this.key, 0, this.length - 1);
  }

  close(): void {
    this.client.disconnect();
  }
}

async function migrateRoom(
  store: RedisStore,
  source: SqliteSource,
  slug: string,
  nowMs: number,
  report: MigrationReport,
): Promise<RoomResult> {
  await store.reserveSlug(slug);
  const room = source.room(slug, nowMs);
  if (room === null) return 'reserved';
  let result: RoomResult = 'unchanged';
  const difference = await differenceFrom(store, room);
  if (difference === 'absent') {
    try {
      await store.commit({
        slug,
        expected_version: 0,
        snapshot: room.snapshot,
        events: room.events,
        receipts: room.receipts,
        archived: room.archived,
        idempotency: room.idempotency,
        next_deadline: room.next_deadline,
      });
      result = 'created';
    } catch (error) {
      // Another run created it in between: compare again rather than overwrite.
      const again = await differenceFrom(store, room);
      if (again !== null) return conflict(report, slug, again === 'absent' ? (error as Error).message : again);
    }
  } else if (difference !== null) {
    return conflict(report, slug, difference);
  }
  // The room is there as it is here: its side records, each written where absent.
  for (const { webhook, deliveries } of source.webhooks(slug)) {
    const imported = await store.engagement.importWebhook(webhook, deliveries);
    if (imported === 'different') return conflict(report, slug, `webhook ${webhook.id} differs`);
    if (imported === 'created') report.webhooks++;
  }
  for (const [participantId, decisionIds] of source.openerWakes(slug))
    await store.engagement.consumeOpenerWakes(slug, participantId, decisionIds);
  for (const link of source.links(slug)) {
    await store.linkRoom(link.key, slug, link.linked_at);
    report.links++;
  }
  return result;
}

/** Hosted keys still within their retention, and every revocation in the order it was made. */
async function migrateIdentity(
  options: RedisStoreOptions,
  source: SqliteSource,
  nowMs: number,
  report: MigrationReport,
): Promise<void> {
  const client = createRedisClient(options.url, {
    cluster: options.cluster ?? false,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    role: 'commands',
  });
  await connectRedisClient(client);
  try {
    const identity = new RedisIdentityStore(client, options.keyPrefix ?? 'conclave:');
    for (const key of source.hostedKeys()) {
      const result = await identity.importHostedKey(key, nowMs);
      if (result === 'created') report.identity.hostedKeys++;
      if (result === 'different')
        report.conflicts.push({ slug: '-', reason: `hosted key ${key.publicId} differs in Redis` });
    }
    for (const revocation of source.revocations())
      if (await identity.importRevocation(revocation)) report.identity.revocations++;
  } finally {
    client.disconnect();
  }
}

function conflict(report: MigrationReport, slug: string, reason: string): RoomResult {
  report.conflicts.push({ slug, reason });
  return 'conflict';
}

/** null when Redis holds the room exactly as the source does, 'absent' when it holds none, else why not. */
async function differenceFrom(store: RedisStore, room: SourceRoom): Promise<string | null | 'absent'> {
  const held = await store.load(room.slug);
  if (held === null) return (await store.roomExists(room.slug)) ? 'unreadable' : 'absent';
  if (held.head !== room.head) return `its history is at event ${held.head} in Redis, ${room.head} here`;
  if (held.snapshot !== room.snapshot) return 'its live state differs';
  if (held.next_deadline !== room.next_deadline) return 'its next deadline differs';
  const receipts = await store.receipts(room.slug);
  if (JSON.stringify(receipts.map(receiptKey)) !== JSON.stringify(room.receipts.map(receiptKey)))
    return 'its receipts differ';
  const archived = await store.archivedDecisions(room.slug);
  if (JSON.stringify(archived.map(archivedKey)) !== JSON.stringify(room.archived.map(archivedKey)))
    return 'its archived decisions differ';
  const events = await store.events(room.slug, 0, room.events.length + 1);
  if (JSON.stringify(events.map(eventKey)) !== JSON.stringify(room.events.map(eventKey))) return 'its events differ';
  return null;
}

const receiptKey = (r: StoredReceipt) => [r.sequence, r.decision_id, r.jws, r.receipt_hash];
const archivedKey = (a: ArchivedDecision) => [a.seq, a.decision_id, a.data];
const eventKey = (e: StoredEvent) => [e.seq, e.id, e.event_type, e.occurred_at, e.decision_id, e.actor, e.data];

/** The live log's tables as migration 7 creates them, empty, in the connection's temp schema (reads only). */
const EMPTY_LIVE_LOG = `
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.entries} (idx INTEGER PRIMARY KEY, leaf TEXT NOT NULL, receipt_hash TEXT NOT NULL);
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.tiles} (level INTEGER NOT NULL, idx INTEGER NOT NULL, hashes BLOB NOT NULL, PRIMARY KEY (level, idx));
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.checkpoints} (size INTEGER PRIMARY KEY, note TEXT NOT NULL);
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.cosignatures} (size INTEGER NOT NULL, witness TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (size, witness));
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.rooms} (slug TEXT PRIMARY KEY, logged INTEGER NOT NULL);
  CREATE TEMP TABLE ${LIVE_LOG_TABLES.state} (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL, published INTEGER NOT NULL);
  INSERT INTO temp.${LIVE_LOG_TABLES.state} (id, size, published) VALUES (1, 0, 0);
`;

/** The SQLite data directory, read only: the migration never writes to its source. */
class SqliteSource {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.db.pragma('busy_timeout = 5000');
    // One read transaction for the whole run: rooms and log are read from one view of the file.
    this.db.exec('BEGIN');
    this.db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
  }

  /**
   * The store's two transparency logs, or null for a store from before the log (schema below 6). A
   * store from before the commitment log (schema 6, never started since) has only the v1 log, now
   * the frozen one; its live log is empty and stands in as empty tables in this connection's temp
   * schema (the source file is never written), so it moves as the first integrator would find it
   * after migration 7: empty, with the queue, to be back-filled from the frozen log on Redis.
   */
  logs(): { live: SqliteLogStore; frozen: SqliteLogStore } | null {
    if (!this.hasTable('tlog_state')) return null;
    if (!this.hasTable(LIVE_LOG_TABLES.state)) this.db.exec(EMPTY_LIVE_LOG);
    const read = async <T>(work: () => T): Promise<T> => work();
    const never = () => Promise.reject(new Error('the migration never writes its source'));
    return {
      live: new SqliteLogStore(this.db, read, never, LIVE_LOG_TABLES),
      frozen: new SqliteLogStore(this.db, read, never, FROZEN_LOG_TABLES),
    };
  }

  queueLength(): number {
    if (!this.hasTable('tlog_queue')) return 0;
    return (this.db.prepare('SELECT COUNT(*) AS n FROM tlog_queue').get() as { n: number }).n;
  }

  private hasColumn(table: string, column: string): boolean {
    return this.db
      .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
      .all()
      .some((row) => row.name === column);
  }

  meta(): [string, string][] {
    return this.db
      .prepare<[], { key: string; value: string }>('SELECT key, value FROM meta ORDER BY key')
      .all()
      .map((row) => [row.key, row.value]);
  }

  /** Every slug ever reserved, live rooms and deleted ones. */
  slugs(): string[] {
    return this.db
      .prepare<[], { slug: string }>('SELECT slug FROM slugs ORDER BY slug')
      .all()
      .map((row) => row.slug);
  }

  room(slug: string, nowMs: number): SourceRoom | null {
    const row = this.db
      .prepare<[string], { head: number; snapshot: string; next_deadline: number | null }>(
        'SELECT head, snapshot, next_deadline FROM rooms WHERE slug = ?',
      )
      .get(slug);
    if (!row) return null;
    const events = this.db
      .prepare<[string], Omit<StoredEvent, 'data'> & { data: string }>(
        'SELECT id, seq, event_type, occurred_at, decision_id, data, actor FROM events WHERE slug = ? ORDER BY seq',
      )
      .all(slug)
      .map((e) => ({
        id: e.id,
        seq: e.seq,
        event_type: e.event_type,
        occurred_at: e.occurred_at,
        decision_id: e.decision_id,
        data: JSON.parse(e.data) as Record<string, unknown>,
        actor: e.actor,
      }));
    const receipts = this.db
      .prepare<[string], StoredReceipt>(
        'SELECT sequence, decision_id, jws, receipt_hash FROM receipts WHERE slug = ? ORDER BY sequence',
      )
      .all(slug);
    const archived = this.db
      .prepare<[string], ArchivedDecision>(
        'SELECT decision_id, seq, data FROM archived_decisions WHERE slug = ? ORDER BY seq',
      )
      .all(slug);
    const idempotency = this.db
      .prepare<[string], IdempotencyRecord>(
        "SELECT scope, fingerprint, status, body, created_at FROM idempotency WHERE scope LIKE ? || '|%' ORDER BY scope",
      )
      .all(slug)
      .filter((record) => slugOfScope(record.scope) === slug && !isIdempotencyExpired(record, nowMs));
    return {
      slug,
      head: row.head,
      snapshot: row.snapshot,
      next_deadline: row.next_deadline,
      events,
      receipts,
      archived,
      idempotency,
    };
  }

  webhooks(slug: string): { webhook: WebhookRecord; deliveries: DeliveryRecord[] }[] {
    // settled_at came with migration 8; the source is read as it is, maybe from before it.
    const settledAt = this.hasColumn('deliveries', 'settled_at') ? 'settled_at' : 'NULL AS settled_at';
    const deliveries = this.db.prepare<[string], DeliveryRow>(
      `SELECT webhook_id, event_id, slug, seq, status, attempts, next_attempt_at, ${settledAt} FROM deliveries WHERE webhook_id = ? ORDER BY seq, event_id`,
    );
    return this.db
      .prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE slug = ? ORDER BY created_at, id')
      .all(slug)
      .map((row) => ({ webhook: toWebhook(row), deliveries: deliveries.all(row.id).map(toDelivery) }));
  }

  openerWakes(slug: string): [string, string[]][] {
    const byParticipant = new Map<string, string[]>();
    for (const row of this.db
      .prepare<[string], { participant_id: string; decision_id: string }>(
        'SELECT participant_id, decision_id FROM opener_wakes WHERE slug = ? ORDER BY participant_id, decision_id',
      )
      .all(slug)) {
      byParticipant.set(row.participant_id, [...(byParticipant.get(row.participant_id) ?? []), row.decision_id]);
    }
    return [...byParticipant];
  }

  links(slug: string): { key: string; linked_at: number }[] {
    return this.db
      .prepare<[string], { key: string; linked_at: number }>(
        'SELECT key, linked_at FROM room_links WHERE slug = ? ORDER BY key',
      )
      .all(slug);
  }

  hostedKeys(): ReturnType<typeof fromKeyRow>[] {
    if (!this.hasTable('identity_hosted_keys')) return [];
    return this.db
      .prepare<[], KeyRow>('SELECT * FROM identity_hosted_keys ORDER BY created_at, key_hash')
      .all()
      .map(fromKeyRow);
  }

  revocations(): Revocation[] {
    if (!this.hasTable('identity_revocations')) return [];
    return this.db
      .prepare<[], { jti: string; revoked_at: string; reason: string | null }>(
        'SELECT jti, revoked_at, reason FROM identity_revocations ORDER BY seq',
      )
      .all()
      .map((row) => ({
        jti: row.jti,
        revoked_at: row.revoked_at,
        ...(row.reason !== null ? { reason: row.reason } : {}),
      }));
  }

  /** The identity tables exist once a service has started on the file. */
  private hasTable(name: string): boolean {
    return (
      this.db
        .prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(name) !== undefined
    );
  }

  close(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
  }
}
