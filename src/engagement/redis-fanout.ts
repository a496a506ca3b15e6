/**
 * Cross-process commit notices in Redis mode: every process publishes `{slug, head}` on one channel
 * per deployment (the key prefix names the deployment) after each commit it makes, and every other
 * process hands what it hears to its own CommitBus, so a write on process A wakes a long-poll or SSE
 * stream parked on process B. A lost message only delays a wake until the room's next commit or
 * the wait's timeout: waiters always evaluate the committed state, never the message.
 */
import { randomUUID } from 'node:crypto';
import { createRedisClient, type RedisClient } from '../store/redis-connection.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../store/redis-store.js';

interface Notice {
  origin: string;
  slug: string;
  head: number;
}

export class RedisCommitFanout {
  private readonly origin = randomUUID();
  private readonly channel: string;

  private constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    keyPrefix: string,
    private readonly onError: (error: unknown) => void,
  ) {
    this.channel = `${keyPrefix}commits`;
  }

  static async open(
    url: string,
    cluster: boolean,
    keyPrefix: string,
    onRemoteCommit: (slug: string, head: number) => void,
    onError: (error: unknown) => void,
  ): Promise<RedisCommitFanout> {
    const options = { cluster, commandTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS, role: 'pubsub' } as const;
    const publisher = createRedisClient(url, options);
    const subscriber = createRedisClient(url, options);
    const fanout = new RedisCommitFanout(publisher, subscriber, keyPrefix, onError);
    await Promise.all([publisher.connect(), subscriber.connect()]);
    subscriber.on('message', (channel: string, text: string) => {
      if (channel !== fanout.channel) return;
      const notice = parseNotice(text);
      if (notice && notice.origin !== fanout.origin) onRemoteCommit(notice.slug, notice.head);
    });
    await subscriber.subscribe(fanout.channel);
    return fanout;
  }

  publish(slug: string, head: number): void {
    const notice: Notice = { origin: this.origin, slug, head };
    this.publisher.publish(this.channel, JSON.stringify(notice)).catch(this.onError);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.subscriber.quit(), this.publisher.quit()]);
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
