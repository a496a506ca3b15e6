/** Opens the configured RoomStore; the rest of the service sees only the port. */
import type { RoomStore } from './port.js';
import { openRedisStore } from './redis-store.js';
import { openSqliteStore } from './sqlite-store.js';

export type StoreConfig = (
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'redis';
      url: string;
      cluster?: boolean;
      keyPrefix?: string;
      commandTimeoutMs?: number;
      waitReplicas?: number;
      waitTimeoutMs?: number;
      compactAfterMs?: number | null;
      commitNotices?: 'sharded' | 'both';
    }
) & {
  /** Epoch ms for idempotency record age; defaults to Date.now. */
  clock?: () => number;
};

export async function openStore(config: StoreConfig): Promise<RoomStore> {
  switch (config.kind) {
    case 'sqlite':
      return openSqliteStore(config);
    case 'redis':
      return openRedisStore(config);
  }
}
