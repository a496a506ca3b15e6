/**
 * Room retention (ROOM_RETENTION_DAYS, off by default; docs/operations-backup.md): a room concluded
 * that many days ago gives back its event history, webhooks, deliveries and opener wakes. What its
 * published receipts need stays: the room's live state (question, options, seats as hashes, the
 * conclusion, the newest messages), its archived decisions and the whole receipt chain, so
 * GET /outcome and `conclave verify <room URL>` keep answering; the signing keys are never removed.
 * Deleted rooms are already gone but for their slug, which stays reserved for ever so that no new
 * room can answer at a URL that a deleted room's receipts name.
 */
import type { RoomStore } from './port.js';

export const DAY_MS = 86_400_000;
/** The sweep takes each room's lock this long at most, and waits this long for it. */
const LOCK_TTL_MS = 30_000;
const LOCK_WAIT_MS = 2_000;
const PAGE = 200;

export interface RetentionReport {
  /** Rooms whose history was reclaimed by this sweep. */
  reclaimed: string[];
  /** Events removed. */
  events: number;
}

/** Reads when a stored snapshot's room concluded (epoch ms), or null while it is open. */
export function concludedAt(snapshot: string): number | null {
  const parsed = JSON.parse(snapshot) as { context?: { conclusion?: { at?: unknown } | null } };
  const at = parsed.context?.conclusion?.at;
  return typeof at === 'number' ? at : null;
}

/**
 * One pass over every room: those concluded at least `retentionDays` before `nowMs`, whose history
 * is still there, are reclaimed under their room lock. A room busy elsewhere is left for the next pass.
 */
export async function reclaimConcludedRooms(
  store: RoomStore,
  options: { retentionDays: number; nowMs: number; onReclaimed?: (slug: string, events: number) => void },
): Promise<RetentionReport> {
  const cutoff = options.nowMs - options.retentionDays * DAY_MS;
  const report: RetentionReport = { reclaimed: [], events: 0 };
  let cursor = '';
  do {
    const page = await store.roomSlugs(cursor, PAGE);
    for (const slug of page.slugs) {
      const room = await store.load(slug);
      if (room === null) continue;
      const at = concludedAt(room.snapshot);
      if (at === null || at > cutoff) continue;
      if ((await store.events(slug, 0, 1)).length === 0) continue;
      let lock: Awaited<ReturnType<RoomStore['lock']>>;
      try {
        lock = await store.lock(slug, LOCK_TTL_MS, LOCK_WAIT_MS);
      } catch {
        continue;
      }
      try {
        const events = await store.reclaimHistory(slug);
        report.reclaimed.push(slug);
        report.events += events;
        options.onReclaimed?.(slug, events);
      } finally {
        await lock.release();
      }
    }
    cursor = page.cursor ?? '';
  } while (cursor !== '');
  return report;
}

/** Sweeps this often; a room waits at most this long past its retention before it is reclaimed. */
export const RETENTION_SWEEP_MS = 60 * 60_000;

export interface RetentionTimer {
  /** One pass now (tests, and the first pass at start). */
  runNow(): Promise<RetentionReport>;
  stop(): void;
}

/** Runs a pass every RETENTION_SWEEP_MS (unref'd, one at a time), times read from the service clock. */
export function startRetention(
  store: RoomStore,
  options: { retentionDays: number; now: () => number; onError: (error: unknown) => void },
): RetentionTimer {
  let running: Promise<RetentionReport> | null = null;
  const runNow = () => {
    running ??= reclaimConcludedRooms(store, { retentionDays: options.retentionDays, nowMs: options.now() }).finally(
      () => {
        running = null;
      },
    );
    return running;
  };
  const timer = setInterval(() => runNow().catch(options.onError), RETENTION_SWEEP_MS);
  timer.unref();
  return { runNow, stop: () => clearInterval(timer) };
}
