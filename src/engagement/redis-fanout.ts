/**
 * Cross-process commit notices in Redis mode: every room commit is announced as `{origin, slug,
 * head}` on one channel per deployment (the key prefix names the deployment) by the commit script
 * itself, in the same round trip as the write (store/redis-scripts.ts), and every process hands what
 * it hears from the others to its own CommitBus, so a write on process A wakes a long-poll or SSE
 * stream parked on process B. A lost message only delays a wake until the room's next commit or
 * the wait's timeout: waiters always evaluate the committed state, never the message.
 */
import { createRedisClient, type RedisClient } from '../store/redis-connection.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../store/redis-store.js';

interface Notice {
  origin: string;
  slug: string;
  head: number;
}

export class RedisCommitFanout {
  private constructor(private readonly subscriber: RedisClient) {}

  /**
   * Listens on `channel` for the commits of every store but the one named `ownOrigin` (this
   * process's, whose commits its own CommitBus already heard).
   */
  static async open(
    url: string,
    cluster: boolean,
    channel: string,
    ownOrigin: string,
    onRemoteCommit: (slug: string, head: number) => void,
  ): Promise<RedisCommitFanout> {
    const subscriber = createRedisClient(url, {
      cluster,
      commandTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
      role: 'pubsub',
    });
    await subscriber.connect();
    subscriber.on('message', (heard: string, text: string) => {
      if (heard !== channel) return;
      const notice = parseNotice(text);
      if (notice && notice.origin !== ownOrigin) onRemoteCommit(notice.slug, notice.head);
    });
    await subscriber.subscribe(channel);
    return new RedisCommitFanout(subscriber);
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }
}

function parseNotice(text: string): Notice | null {
  try {
    const value = JSON.parse(text) as Partial<Notice>;
    return typeof value.slug === 'string' && typeof value.head === 'number' && typeof value.origin === 'string'
      ? (value as Notice)
      : null;
  } catch {
    return null;
  }
}
