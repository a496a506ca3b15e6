/**
 * Upgrades rooms stored in an older snapshot shape at start-up, so their stored bytes shrink
 * without waiting for someone to write to them. Each stale room gets one empty turn, which commits
 * the current shape (and archives its resolved decisions) under the room's lock. Idempotent and
 * crash-safe: a room already current is skipped, and the format is recorded in the store only
 * after the whole pass, so an interrupted pass simply runs again at the next start. Reads never
 * wait for it: a room loaded in an older shape is upgraded in memory (snapshot-format.ts).
 */
import type { RoomStore } from '../store/port.js';
import { readSnapshot } from './snapshot-format.js';

/** The snapshot shape this code writes; recorded under `snapshot_format` once every room has it. */
export const SNAPSHOT_FORMAT = '2';
const PAGE = 200;

export interface UpgradeReport {
  checked: number;
  upgraded: number;
  /** The store already recorded this format: nothing was read. */
  alreadyCurrent: boolean;
}

export async function upgradeStoredRooms(
  store: RoomStore,
  tick: (slug: string) => Promise<void>,
): Promise<UpgradeReport> {
  if ((await store.meta('snapshot_format')) === SNAPSHOT_FORMAT) {
    return { checked: 0, upgraded: 0, alreadyCurrent: true };
  }
  let checked = 0;
  let upgraded = 0;
  let cursor: string | null = '';
  while (cursor !== null) {
    const page: { slugs: string[]; cursor: string | null } = await store.roomSlugs(cursor, PAGE);
    for (const slug of page.slugs) {
      const record = await store.load(slug);
      if (record === null) continue;
      checked++;
      if (!readSnapshot(record.snapshot).upgraded) continue;
      await tick(slug);
      upgraded++;
    }
    cursor = page.cursor;
  }
  await store.setMeta('snapshot_format', SNAPSHOT_FORMAT);
  return { checked, upgraded, alreadyCurrent: false };
}
