/**
 * One way to reach Redis, for the room store, the identity store and rate limits, and the commit
 * fan-out: a single server (`redis://host:port`), or a Redis Cluster when REDIS_URL lists several
 * nodes (`redis://a:7000,redis://b:7001` or `a:7000,b:7001`) or REDIS_CLUSTER=1. Every connection
 * fails fast while Redis is away (the caller answers 503 and the client retries) and reconnects in the
 * background.
 */
import { Cluster, type ClusterNode, Redis, type RedisOptions } from 'ioredis';

/** Either client: both speak the same commands, scripts and pipelines. */
export type RedisClient = Redis;

export interface RedisTarget {
  nodes: { host: string; port: number }[];
  cluster: boolean;
  /** From the first URL: credentials, TLS and database apply to every node. */
  options: Pick<RedisOptions, 'username' | 'password' | 'db' | 'tls'>;
}

/** Reads REDIS_URL: one URL, or a comma-separated list of nodes. Throws a message fit for the operator. */
export function parseRedisUrl(value: string, forceCluster = false): RedisTarget {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new Error('REDIS_URL is empty');
  const urls = parts.map((part) => {
    const text = /^[a-z]+:\/\//i.test(part) ? part : `redis://${part}`;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`REDIS_URL: "${part}" is neither a redis:// URL nor host:port`);
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      throw new Error(`REDIS_URL: "${part}" must use redis:// or rediss://`);
    }
    return url;
  });
  const first = urls[0]!;
  const db = first.pathname.length > 1 ? Number(first.pathname.slice(1)) : undefined;
  return {
    nodes: urls.map((url) => ({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) })),
    cluster: forceCluster || urls.length > 1,
    options: {
      ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
      ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
      ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

/** How often a sharded subscriber re-reads the Cluster's slot map (one CLUSTER SLOTS). */
const SHARDED_SLOTS_REFRESH_MS = 5000;

export interface ConnectOptions {
  cluster?: boolean;
  /** A command unanswered this long fails (unavailable) instead of hanging. */
  commandTimeoutMs: number;
  /**
   * `commands` fail at once when the connection is down and never resend (a commit whose reply was
   * lost is reported as unavailable, not replayed later); `pubsub` retries once and resubscribes.
   */
  role: 'commands' | 'pubsub';
  /**
   * A Cluster connection that SSUBSCRIBEs (engagement/redis-fanout.ts): ioredis keeps one subscriber
   * connection per master and sends each sharded subscription to the node owning its slot.
   */
  shardedPubsub?: boolean;
}

function connectionOptions(options: ConnectOptions): RedisOptions {
  const commands = options.role === 'commands';
  return {
    lazyConnect: true,
    enableOfflineQueue: !commands,
    maxRetriesPerRequest: commands ? 0 : 1,
    autoResendUnfulfilledCommands: !commands,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    connectTimeout: options.commandTimeoutMs,
    ...(commands ? { commandTimeout: options.commandTimeoutMs } : {}),
    // Commands issued in one event-loop turn (every room's lock, load, commit, release) leave in one
    // socket write: the profile of choose over 1,000 rooms spent a fifth of the main thread in the
    // write syscall of single commands.
    enableAutoPipelining: commands,
  };
}

/** A client for `url`, not yet connected (call `connect()`); errors surface on the requests they fail. */
export function createRedisClient(url: string, options: ConnectOptions): RedisClient {
  const target = parseRedisUrl(url, options.cluster);
  const redisOptions = { ...connectionOptions(options), ...target.options };
  let client: Redis | Cluster;
  if (target.cluster) {
    const nodes: ClusterNode[] = target.nodes;
    client = new Cluster(nodes, {
      lazyConnect: true,
      redisOptions,
      enableAutoPipelining: redisOptions.enableAutoPipelining,
      enableOfflineQueue: redisOptions.enableOfflineQueue,
      // A failover moves slots: follow MOVED/ASK, and refresh the slot map quickly when a node is gone.
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: Math.min(options.commandTimeoutMs, 2000),
      scaleReads: 'master',
      // ioredis groups an auto-pipelined command by the slot of its first argument; a script defined
      // without a fixed key count (the room commit, the log append) starts with its key count, so it
      // would join the pipeline of whatever slot that number hashes to, and a pipeline mixing nodes is
      // refused whole ("All keys in the pipeline should belong to the same slots allocation group",
      // seen as 503s under concurrent commits). They are sent on their own instead.
      autoPipeliningIgnoredCommands: ['conclaveCommit', 'conclaveLogAppend'],
      shardedSubscribers: options.shardedPubsub === true,
      // A subscriber connection sends no keyed command, so it never meets the MOVED that makes ioredis
      // re-read the slot map: after a slot migration (no failover) Redis drops the slot's sharded
      // subscriptions, and only a periodic re-read lets ioredis subscribe them again on the new owner.
      ...(options.shardedPubsub === true ? { slotsRefreshInterval: SHARDED_SLOTS_REFRESH_MS } : {}),
    });
  } else {
    client = new Redis({ ...redisOptions, host: target.nodes[0]!.host, port: target.nodes[0]!.port });
  }
  client.on('error', () => {});
  // Cluster and Redis share the command API (Commander); the store is written against it.
  return client as unknown as RedisClient;
}

/** Connects, or disconnects and throws. */
export async function connectRedisClient(client: RedisClient): Promise<void> {
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw error;
  }
}
