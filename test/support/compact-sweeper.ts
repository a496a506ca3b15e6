/**
 * A process that does nothing but compaction sweeps over one deployment's rooms, again and again,
 * until it is killed (test/integration/store/redis-compaction.test.ts kills it with SIGKILL).
 * Run as `node --import tsx test/support/compact-sweeper.ts` with REDIS_URL and REDIS_KEY_PREFIX.
 */
import { openRedisStore } from '../../src/store/redis-store.js';

const store = await openRedisStore({ url: process.env.REDIS_URL ?? '', keyPrefix: process.env.REDIS_KEY_PREFIX ?? '' });
for (;;) await store.compactConcludedRooms();
