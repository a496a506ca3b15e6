/**
 * Cross-process commit notices in Redis mode (docs/architecture.md, Engagement: commit notices). The
 * commit script announces every commit as `{origin, slug, head}` on the room's own channel, under the
 * room's `{slug}` hash tag, with SPUBLISH (sharded pub/sub, Redis 7): on a Cluster only the room's
 * shard carries it, and only the processes subscribed to that room hear it. This process subscribes
 * (SSUBSCRIBE) to the rooms something here waits on (room-subscriptions.ts decides which and when)
 * and hands what it hears from the other stores' origins to its own CommitBus. Waiters always
 * evaluate the committed state, never the message, so a lost notice costs a re-read at the wait's
 * next deadline, never a wrong answer.
 *
 * With COMMIT_NOTICES=both (a rolling upgrade from the broadcast design) the commit script also
 * PUBLISHes on the deployment's one broadcast channel, flagged `sharded`, for processes of the
 * previous version, and this process also listens there for the commits of those processes (the
 * unflagged ones; a flagged one already came on its room's channel).
 */
import { createRedisClient, parseRedisUrl, type RedisClient } from '../store/redis-connection.js';
import type { RedisKeys } from '../store/redis-keys.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../store/redis-store.js';
import { type NoticeChannels, RoomSubscriptions } from './room-subscriptions.js';

/** How commit notices travel: per-room sharded channels, or those and the broadcast of earlier versions. */
export type CommitNoticeMode = 'sharded' | 'both';

/** Where a notice was heard: a room's sharded channel, or the deployment's broadcast channel. */
export type NoticeChannel = 'room' | 'broadcast';

interface Notice {
  origin: string;
  slug: string;
  head: number;
  sharded?: boolean;
}

export interface CommitNoticeOptions {
  url: string;
  cluster: boolean;
  keys: Pick<RedisKeys, 'commits' | 'roomCommits'>;
  mode: CommitNoticeMode;
  /** This process's store: its own commits reached its CommitBus already. */
  ownOrigin: string;
  /** A commit of another process, or a re-check after a subscription was confirmed. */
  onCommit(slug: string): void;
  /** Every notice that reached the subscriber connection (the metric counts them). */
  onNotice?(channel: NoticeChannel): void;
  onError?(error: unknown): void;
  lingerMs?: number;
}

export class RedisCommitNotices {
  readonly rooms: RoomSubscriptions;

  private constructor(
    private readonly subscriber: RedisClient,
    options: CommitNoticeOptions,
  ) {
    this.rooms = new RoomSubscriptions(shardedChannels(subscriber, options), {
      onSubscribed: (slug) => options.onCommit(slug),
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.lingerMs !== undefined ? { lingerMs: options.lingerMs } : {}),
    });
  }

  static async open(given: CommitNoticeOptions): Promise<RedisCommitNotices> {
    // Several nodes in the URL make a Cluster even without the flag (redis-connection.ts).
    const options = { ...given, cluster: parseRedisUrl(given.url, given.cluster).cluster };
    const subscriber = createRedisClient(options.url, {
      cluster: options.cluster,
      commandTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
      role: 'pubsub',
      shardedPubsub: true,
    });
    await subscriber.connect();
    const notices = new RedisCommitNotices(subscriber, options);
    const { commits, roomCommits } = options.keys;
    subscriber.on('smessage', (channel: string, text: string) => {
      options.onNotice?.('room');
      const notice = parseNotice(text);
      if (notice && notice.origin !== options.ownOrigin && channel === roomCommits(notice.slug)) {
        options.onCommit(notice.slug);
      }
    });
    if (options.mode === 'both') {
      subscriber.on('message', (channel: string, text: string) => {
        if (channel !== commits) return;
        options.onNotice?.('broadcast');
        const notice = parseNotice(text);
        if (notice && !notice.sharded && notice.origin !== options.ownOrigin) options.onCommit(notice.slug);
      });
      await subscriber.subscribe(commits);
    }
    // What the server holds is unknown after a reconnect (one Redis) or once the Cluster's sharded
    // subscribers were rebuilt for a new slot map (a failover, a migrated slot): subscribe every
    // wanted room again, and re-check each once confirmed.
    const resubscribe = () => notices.rooms.resubscribeAll();
    subscriber.on(options.cluster ? 'subscribersReady' : 'ready', resubscribe);
    return notices;
  }

  async close(): Promise<void> {
    this.rooms.close();
    await this.subscriber.quit().catch(() => undefined);
  }
}

/**
 * SSUBSCRIBE and SUNSUBSCRIBE of the rooms' channels, each bounded by the command timeout (ioredis
 * drops an SSUBSCRIBE answered MOVED without settling it; room-subscriptions.ts retries). One Redis
 * takes the channels of many slots in one command; a Cluster takes one slot per command, and ioredis
 * (`shardedSubscribers`) sends each to the connection of the node that owns it.
 */
function shardedChannels(subscriber: RedisClient, options: CommitNoticeOptions): NoticeChannels {
  const channelsOf = (slugs: string[]) => slugs.map((slug) => options.keys.roomCommits(slug));
  const bounded = (command: Promise<unknown>) => withTimeout(command, DEFAULT_COMMAND_TIMEOUT_MS);
  const inSlots = (slugs: string[], send: (channels: string[]) => Promise<unknown>) =>
    options.cluster
      ? Promise.all(channelsOf(slugs).map((channel) => bounded(send([channel]))))
      : bounded(send(channelsOf(slugs)));
  return {
    subscribe: async (slugs) => {
      await inSlots(slugs, (channels) => subscriber.ssubscribe(...channels));
    },
    unsubscribe: async (slugs) => {
      await inSlots(slugs, (channels) => subscriber.sunsubscribe(...channels));
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not confirm the subscription within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
