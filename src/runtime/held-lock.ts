/**
 * The room lock as the write path holds it (docs/architecture.md, Storage, "Room locks"): taken
 * only on a shared store, renewed while the batch runs, let go by the commit or released after.
 */
import type { RoomLock, RoomStore } from '../store/port.js';
import type { RoomCache } from './room-cache.js';

/**
 * A room lock lives 1.5 s and is renewed while its turn runs (keptAlive): a process that dies holding
 * it costs its rooms at most 1.5 s. A request waits at most 3 s for a busy room, then answers 503.
 */
const LOCK_TTL_MS = 1_500;
const LOCK_WAIT_MS = 3_000;

/** A lock this process holds for a batch; a commit that let it go (release_lock) says so. */
export interface HeldLock extends RoomLock {
  releasedByCommit(): void;
}

/**
 * The room's lock, or null on the embedded store. The lock's round trip is told what `cache` holds
 * of the room, so it can say whether that is current (RoomLock.found, RoomLock.loaded).
 */
export async function lockRoom(
  store: RoomStore,
  slug: string,
  cache: RoomCache,
  onLock: ((waitSeconds: number, acquired: boolean) => void) | undefined,
): Promise<HeldLock | null> {
  // The embedded store is single-process: the mailbox already serialises, and the version check fences.
  if (store.kind === 'sqlite') return null;
  const started = performance.now();
  const cached = cache.get(slug);
  const known = cached ? { version: cached.version, revision: cached.revision } : null;
  try {
    const lock = await store.lock(slug, LOCK_TTL_MS, LOCK_WAIT_MS, known);
    onLock?.((performance.now() - started) / 1000, true);
    return keptAlive(lock, LOCK_TTL_MS);
  } catch (error) {
    onLock?.((performance.now() - started) / 1000, false);
    throw error;
  }
}

/** The lock, renewed every third of its TTL until released, however long the turn takes. */
function keptAlive(lock: RoomLock, ttlMs: number): HeldLock {
  const renewal = setInterval(() => void lock.renew(), Math.floor(ttlMs / 3));
  renewal.unref();
  let held = true;
  return {
    slug: lock.slug,
    token: lock.token,
    ...(lock.found !== undefined ? { found: lock.found } : {}),
    ...(lock.loaded !== undefined ? { loaded: lock.loaded } : {}),
    renew: () => lock.renew(),
    releasedByCommit: () => {
      held = false;
      clearInterval(renewal);
    },
    release: async () => {
      clearInterval(renewal);
      if (held) await lock.release();
      held = false;
    },
  };
}
