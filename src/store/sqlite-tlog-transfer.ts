/**
 * Export and import of one SQLite log (LogPart in tlog-port.ts; its LogTables in sqlite-tlog.ts: the
 * live commitment log's `tlog_v2_*` or the frozen v1 log's `tlog_*`), for moving a log between
 * stores (log-transfer.ts). Every table is read in its key order, a bounded page at a time, so a log
 * of millions of leaves never sits in memory. The shared queue (`tlog_queue`) travels with the log
 * that consumes it, the live one (`LogTables.queue`), and never with the frozen one.
 */
import type Database from 'better-sqlite3';
import { StoreConflictError } from './port.js';
import type { LogTables } from './sqlite-tlog.js';
import type { LogImport, LogPart, QueuedReceipt } from './tlog-port.js';

const HASH = 32;
const TILE_HASHES = 256;

type Run = <T>(work: () => T) => Promise<T>;

function exportStatements(db: Database.Database, t: LogTables) {
  return {
    entries: db.prepare<[number, number], { idx: number; data: string }>(
      `SELECT idx, ${t.data} AS data FROM ${t.entries} WHERE idx >= ? ORDER BY idx LIMIT ?`,
    ),
    index: db.prepare<[number, number], { idx: number; receipt_hash: string }>(
      `SELECT idx, receipt_hash FROM ${t.entries} WHERE idx >= ? ORDER BY idx LIMIT ?`,
    ),
    tiles: db.prepare<[number, number, number], { level: number; idx: number; hashes: Buffer }>(
      `SELECT level, idx, hashes FROM ${t.tiles} WHERE (level, idx) > (?, ?) ORDER BY level, idx LIMIT ?`,
    ),
    checkpoints: db.prepare<[number, number], { size: number; note: string }>(
      `SELECT size, note FROM ${t.checkpoints} WHERE size > ? ORDER BY size LIMIT ?`,
    ),
    cosignatures: db.prepare<[number, number], { size: number; witness: string; line: string }>(
      `SELECT size, witness, line FROM ${t.cosignatures} WHERE size > ? AND size <= ? ORDER BY size, witness`,
    ),
    rooms: db.prepare<[string, number], { slug: string; logged: number }>(
      `SELECT slug, logged FROM ${t.rooms} WHERE slug > ? ORDER BY slug LIMIT ?`,
    ),
    queue: db.prepare<[number, number], QueuedReceipt & { id: number }>(
      'SELECT id, slug, sequence, jws, receipt_hash FROM tlog_queue WHERE id > ? ORDER BY id LIMIT ?',
    ),
    state: db.prepare<[], { size: number; published: number }>(`SELECT size, published FROM ${t.state} WHERE id = 1`),
  };
}

/** One log's tables as LogParts. Run it on a consistent view: a stopped service, or one read transaction. */
export async function* exportSqliteLog(
  db: Database.Database,
  tables: LogTables,
  run: Run,
  chunk: number,
): AsyncIterable<LogPart> {
  const sql = exportStatements(db, tables);
  for (let from = 0; ; ) {
    const rows = await run(() => sql.entries.all(from, chunk));
    if (rows.length === 0) break;
    rows.forEach((row, i) => {
      if (row.idx !== from + i) throw new Error(`the log's entries skip leaf ${from + i}`);
    });
    yield { kind: 'entries', from, entries: rows.map((row) => row.data) };
    from += rows.length;
  }
  for (let from = 0; ; ) {
    const rows = await run(() => sql.index.all(from, chunk));
    if (rows.length === 0) break;
    yield { kind: 'index', leaves: rows.map((row) => [row.receipt_hash, row.idx] as [string, number]) };
    from = (rows[rows.length - 1] as { idx: number }).idx + 1;
  }
  // One tile row holds up to 256 hashes; a page of rows is at most `chunk` hashes.
  const tilesPerPage = Math.max(1, Math.floor(chunk / TILE_HASHES));
  for (let after = { level: -1, idx: 0 }; ; ) {
    const rows = await run(() => sql.tiles.all(after.level, after.idx, tilesPerPage));
    if (rows.length === 0) break;
    for (const row of rows) {
      yield { kind: 'tiles', level: row.level, from: row.idx * TILE_HASHES, hashes: new Uint8Array(row.hashes) };
    }
    const last = rows[rows.length - 1] as { level: number; idx: number };
    after = { level: last.level, idx: last.idx };
  }
  for (let after = -1; ; ) {
    const page = await run(() => {
      const checkpoints = sql.checkpoints.all(after, chunk);
      const last = checkpoints[checkpoints.length - 1]?.size ?? after;
      const lines = sql.cosignatures.all(after, last);
      return checkpoints.map(({ size, note }) => ({
        size,
        note,
        cosignatures: lines.filter((l) => l.size === size).map(({ witness, line }) => ({ witness, line })),
      }));
    });
    if (page.length === 0) break;
    yield { kind: 'checkpoints', checkpoints: page };
    after = (page[page.length - 1] as { size: number }).size;
  }
  for (let after = ''; ; ) {
    const rows = await run(() => sql.rooms.all(after, chunk));
    if (rows.length === 0) break;
    yield { kind: 'rooms', rooms: rows.map((row) => [row.slug, row.logged] as [string, number]) };
    after = (rows[rows.length - 1] as { slug: string }).slug;
  }
  for (let after = 0; tables.queue; ) {
    const rows = await run(() => sql.queue.all(after, chunk));
    if (rows.length === 0) break;
    yield {
      kind: 'queue',
      receipts: rows.map(({ slug, sequence, jws, receipt_hash }) => ({ slug, sequence, jws, receipt_hash })),
    };
    after = (rows[rows.length - 1] as { id: number }).id;
  }
  const state = (await run(() => sql.state.get())) ?? { size: 0, published: 0 };
  yield { kind: 'state', size: state.size, published: state.published };
}

/**
 * Writes an exported log into this SQLite store's log of `tables`, which must be unpublished and
 * empty (a new store). Each part is one transaction; the state, which makes the leaves the log's, comes last, and
 * until then the integrator cannot take the lease the importer holds. Rows left by an import that
 * never finished (state still empty, nothing published) are cleared first.
 */
export async function importSqliteLog(
  db: Database.Database,
  t: LogTables,
  grouped: Run,
  assertLease: (fence: string) => void,
  fence: string,
): Promise<LogImport> {
  const sql = {
    state: db.prepare<[], { size: number; published: number }>(`SELECT size, published FROM ${t.state} WHERE id = 1`),
    anyCheckpoint: db.prepare<[], { size: number }>(`SELECT size FROM ${t.checkpoints} LIMIT 1`),
    // The receipt hash comes with the index part, after the entries.
    entry: db.prepare<[number, string]>(`INSERT INTO ${t.entries} (idx, ${t.data}, receipt_hash) VALUES (?, ?, '')`),
    indexed: db.prepare<[string, number]>(`UPDATE ${t.entries} SET receipt_hash = ? WHERE idx = ?`),
    unindexed: db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${t.entries} WHERE receipt_hash = ''`),
    tile: db.prepare<[number, number], { hashes: Buffer }>(`SELECT hashes FROM ${t.tiles} WHERE level = ? AND idx = ?`),
    setTile: db.prepare<[number, number, Buffer]>(
      `INSERT INTO ${t.tiles} (level, idx, hashes) VALUES (?, ?, ?) ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes`,
    ),
    checkpoint: db.prepare<[number, string]>(`INSERT INTO ${t.checkpoints} (size, note) VALUES (?, ?)`),
    cosignature: db.prepare<[number, string, string]>(
      `INSERT INTO ${t.cosignatures} (size, witness, line) VALUES (?, ?, ?)`,
    ),
    room: db.prepare<[string, number]>(
      `INSERT INTO ${t.rooms} (slug, logged) VALUES (?, ?) ON CONFLICT (slug) DO UPDATE SET logged = excluded.logged`,
    ),
    queue: db.prepare<[string, number, string, string]>(
      'INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash) VALUES (?, ?, ?, ?)',
    ),
    setState: db.prepare<[number, number]>(`UPDATE ${t.state} SET size = ?, published = ? WHERE id = 1`),
    count: db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${t.entries}`),
    dropQueueOutside: db.prepare<[number, number]>('DELETE FROM tlog_queue WHERE id < ? OR id > ?'),
  };
  const clearImported = () =>
    db.exec(`DELETE FROM ${t.entries}; DELETE FROM ${t.tiles}; DELETE FROM ${t.cosignatures}; DELETE FROM ${t.rooms};`);
  await grouped(() => {
    assertLease(fence);
    const state = sql.state.get() ?? { size: 0, published: 0 };
    if (state.size !== 0 || state.published !== 0 || sql.anyCheckpoint.get() !== undefined)
      throw new StoreConflictError(`this store already holds a transparency log (${state.size} leaves)`);
    clearImported();
  });
  let queued: { first: number; last: number } | null = null;
  let state: { size: number; published: number } | null = null;
  const write = (part: LogPart): void => {
    switch (part.kind) {
      case 'entries':
        for (const [i, entry] of part.entries.entries()) sql.entry.run(part.from + i, entry);
        return;
      case 'index':
        for (const [hash, leaf] of part.leaves) {
          if (sql.indexed.run(hash, leaf).changes !== 1) throw new Error(`the index names leaf ${leaf}, not imported`);
        }
        return;
      case 'tiles':
        appendTileHashes(sql, part.level, part.from, part.hashes);
        return;
      case 'checkpoints':
        for (const checkpoint of part.checkpoints) {
          sql.checkpoint.run(checkpoint.size, checkpoint.note);
          for (const { witness, line } of checkpoint.cosignatures) sql.cosignature.run(checkpoint.size, witness, line);
        }
        return;
      case 'rooms':
        for (const [slug, logged] of part.rooms) sql.room.run(slug, logged);
        return;
      case 'queue':
        if (!t.queue) throw new Error('the frozen log carries no queue: the shared queue travels with the live log');
        for (const r of part.receipts) {
          const id = Number(sql.queue.run(r.slug, r.sequence, r.jws, r.receipt_hash).lastInsertRowid);
          queued = { first: queued?.first ?? id, last: id };
        }
        return;
      case 'state':
        state = { size: part.size, published: part.published };
        return;
    }
  };
  return {
    write: (part) =>
      grouped(() => {
        assertLease(fence);
        write(part);
      }),
    finish: () =>
      grouped(() => {
        assertLease(fence);
        if (state === null) throw new Error('the exported log ended without its state');
        const stored = sql.count.get()?.n ?? 0;
        if (stored !== state.size)
          throw new StoreConflictError(`the import wrote ${stored} leaves, the exported log has ${state.size}`);
        const unindexed = sql.unindexed.get()?.n ?? 0;
        if (unindexed > 0) throw new Error(`the exported index missed ${unindexed} leaves`);
        // The imported queue replaces the store's own (what the trigger queued while rooms were copied).
        if (!t.queue) {
          // The frozen log has no queue: the shared one is the live log's to carry.
        } else if (queued === null) db.exec('DELETE FROM tlog_queue');
        else sql.dropQueueOutside.run(queued.first, queued.last);
        sql.setState.run(state.size, state.published);
      }),
    abandon: () =>
      grouped(() => {
        clearImported();
        db.exec(`DELETE FROM ${t.checkpoints}`);
        if (queued !== null)
          db.prepare('DELETE FROM tlog_queue WHERE id BETWEEN ? AND ?').run(queued.first, queued.last);
      }),
  };
}

/** Appends hashes to the stored tiles of one level, refusing anything but an exact continuation. */
function appendTileHashes(
  sql: {
    tile: Database.Statement<[number, number], { hashes: Buffer }>;
    setTile: Database.Statement<[number, number, Buffer]>;
  },
  level: number,
  from: number,
  hashes: Uint8Array,
): void {
  for (let at = from, offset = 0; offset < hashes.length; ) {
    const tile = Math.floor(at / TILE_HASHES);
    const within = at - tile * TILE_HASHES;
    const stored = sql.tile.get(level, tile)?.hashes ?? Buffer.alloc(0);
    if (stored.length !== within * HASH)
      throw new StoreConflictError(`tile ${level}/${tile} holds ${stored.length / HASH} hashes, not ${within}`);
    const take = Math.min(TILE_HASHES - within, (hashes.length - offset) / HASH);
    sql.setTile.run(level, tile, Buffer.concat([stored, hashes.subarray(offset, offset + take * HASH)]));
    at += take;
    offset += take * HASH;
  }
}
