/**
 * Commit notices on per-room sharded channels (docs/architecture.md, Engagement: commit notices), on
 * a real redis-server and on a real 3-master Cluster: two services in this process, each with its own
 * Redis connections and store origin, share nothing in memory, so every wake below crosses Redis.
 * A process hears a room's commits only while something in it waits on the room.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitBus } from '../../src/engagement/commit-bus.js';
import { RedisCommitNotices } from '../../src/engagement/redis-fanout.js';
import { keysOf } from '../../src/store/redis-keys.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { redisCli, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { openSse } from '../support/sse-client.js';

interface Topology {
  url: string;
  cluster: boolean;
  /** Subscribers of a shard channel on the node that serves it. */
  shardSubscribers(channel: string): Promise<number>;
  /** The master serving a key's slot (one server: always the same). */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

async function single(): Promise<Topology | null> {
  const server: TestRedisServer | null = await startRedisServer();
  if (!server) return null;
  const port = Number(new URL(server.url).port);
  return {
    url: server.url,
    cluster: false,
    async shardSubscribers(channel) {
      return Number((await redisCli(port, 'PUBSUB', 'SHARDNUMSUB', channel)).trim().split('\n')[1]);
    },
    masterOf: async () => port,
    stop: () => server.stop(),
  };
}

async function cluster(): Promise<Topology | null> {
  const nodes: TestRedisCluster | null = await startRedisCluster();
  if (!nodes) return null;
  return {
    url: nodes.url,
    cluster: true,
    async shardSubscribers(channel) {
      const port = await nodes.masterOf(channel);
      return Number((await redisCli(port, 'PUBSUB', 'SHARDNUMSUB', channel)).trim().split('\n')[1]);
    },
    masterOf: (key) => nodes.masterOf(key),
    stop: () => nodes.stop(),
  };
}

describe.each([
  ['one Redis', single],
  ['a 3-master Cluster', cluster],
])('commit notices on %s', (_name, start) => {
  let topology: Topology | null = null;
  let a: RunningService;
  let b: RunningService;
  const prefix = `notices-${randomUUID().slice(0, 8)}:`;
  const keys = keysOf(prefix);
  /** Two rooms, on different masters on the Cluster. */
  const rooms: { slug: string; tokens: string[] }[] = [];

  beforeAll(async () => {
    topology = await start();
    if (!topology) return;
    const env = {
      STORE: 'redis',
      REDIS_URL: topology.url,
      ...(topology.cluster ? { REDIS_CLUSTER: 'true' } : {}),
      REDIS_KEY_PREFIX: prefix,
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    };
    a = await startService({ env });
    b = await startService({ env });
    const masters = new Set<number>();
    while (rooms.length < 2) {
      const room = await seatedRoom(a.base, { about: 'Notices' });
      const master = await topology.masterOf(keys.room(room.slug));
      if (topology.cluster && masters.has(master)) continue;
      masters.add(master);
      rooms.push(room);
    }
  }, 120_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await topology?.stop();
  });

  const skip = () => topology === null;

  it('wakes a long-poll parked on the other process, in rooms on different masters', async (context) => {
    if (skip()) return context.skip();
    for (const { slug, tokens } of rooms) {
      const poll = call(b.base, 'GET', `/api/rooms/${slug}/next-action?for=activity&wait=20`, { token: tokens[0] });
      await eventually(() => b.service.engagement.waiters.parked === 1);
      const said = await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[1],
        body: { body: 'across' },
      });
      expect(said.status).toBe(200);
      const woken = await poll;
      expect(woken.body).toMatchObject({ status: 'activity', for: 'activity' });
    }
  });

  it('streams, on the other process, events committed on this one', async (context) => {
    if (skip()) return context.skip();
    for (const { slug, tokens } of rooms) {
      const stream = await openSse(`${b.base}/api/rooms/${slug}/events/stream`, {
        authorization: `Bearer ${tokens[0]}`,
      });
      expect(stream.status).toBe(200);
      await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'streamed' } });
      const [frame] = await stream.waitFor(1);
      expect(JSON.parse(frame!.data!)).toMatchObject({ data: { body: 'streamed' } });
      stream.close();
    }
  });

  it('sends a process no notices for a room it does not wait on, and unsubscribes after the last waiter', async (context) => {
    if (skip()) return context.skip();
    const { slug, tokens } = rooms[0]!;
    const channel = keys.roomCommits(slug);
    // The earlier tests' waiters are gone: the linger runs out and B leaves the channel.
    await eventually(async () => (await topology!.shardSubscribers(channel)) === 0, 10_000);
    await eventually(() => b.service.engagement.notices!.rooms.held === 0, 10_000);
    const before = b.service.engagement.noticesReceived.room;
    for (let i = 0; i < 5; i++) {
      const said = await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[1],
        body: { body: `m${i}` },
      });
      expect(said.status).toBe(200);
    }
    // A notice B had been sent would have arrived before A's own waiter hears its own next commit.
    const poll = call(a.base, 'GET', `/api/rooms/${slug}/next-action?for=activity&wait=20`, { token: tokens[0] });
    await eventually(() => a.service.engagement.waiters.parked === 1);
    await call(b.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'last' } });
    await poll;
    expect(b.service.engagement.noticesReceived.room).toBe(before);
    const metrics = await (await fetch(`${b.base}/metrics`)).text();
    expect(metrics).toMatch(/^conclave_commit_notices_received_total\{channel="room"\} \d+$/m);
  });

  it('wakes a waiter whose subscription is confirmed only after the commit it waits for', async (context) => {
    if (skip()) return context.skip();
    const { slug, tokens } = rooms[1]!;
    // A listener as the waiters are: it reads the committed head, then listens, and on every notice
    // reads again. Its subscription is held back until the commit has landed.
    let releaseSubscription = () => {};
    const held = new Promise<void>((resolve) => {
      releaseSubscription = resolve;
    });
    const notices = await RedisCommitNotices.open({
      url: topology!.url,
      cluster: topology!.cluster,
      keys,
      mode: 'sharded',
      ownOrigin: 'none',
      onCommit: (room) => bus.notify(room),
    });
    const bus = new CommitBus();
    bus.watchRooms(notices.rooms);
    const real = notices.rooms.channels;
    let subscribeAsked = false;
    notices.rooms.channels = {
      subscribe: async (slugs) => {
        subscribeAsked = true;
        await held;
        await real.subscribe(slugs);
      },
      unsubscribe: (slugs) => real.unsubscribe(slugs),
    };
    const redis = topology!.cluster
      ? new Redis({ port: await topology!.masterOf(keys.room(slug)), host: '127.0.0.1' })
      : new Redis(topology!.url);
    const head = async () => Number(await redis.hget(keys.room(slug), 'head'));
    try {
      const seen = await head();
      const heads: number[] = [];
      bus.listen(slug, () => void head().then((h) => heads.push(h)));
      await eventually(() => subscribeAsked);
      const said = await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[1],
        body: { body: 'race' },
      });
      expect(said.status).toBe(200);
      expect(heads).toEqual([]);
      releaseSubscription();
      await eventually(() => heads.length > 0);
      expect(heads[0]).toBeGreaterThan(seen);
    } finally {
      redis.disconnect();
      await notices.close();
    }
  });
});

describe('commit notices during a rolling upgrade (COMMIT_NOTICES=both)', () => {
  it("hands the bus an earlier version's broadcast notices, and not this version's, counting both", async (context) => {
    const topology = await single();
    if (!topology) return context.skip();
    const keys = keysOf(`upgrade-${randomUUID().slice(0, 8)}:`);
    const commits: string[] = [];
    const counted: string[] = [];
    const notices = await RedisCommitNotices.open({
      url: topology.url,
      cluster: false,
      keys,
      mode: 'both',
      ownOrigin: 'this-process',
      onCommit: (slug) => commits.push(slug),
      onNotice: (channel) => counted.push(channel),
    });
    const publisher = new Redis(topology.url);
    try {
      // As a process of the earlier version announces its commits: unflagged, on the broadcast channel.
      await publisher.publish(keys.commits, JSON.stringify({ origin: 'old-process', slug: 'oldroom', head: 4 }));
      // As this version announces them there during the upgrade: flagged, and also on the room's channel.
      await publisher.publish(
        keys.commits,
        JSON.stringify({ origin: 'new-process', slug: 'newroom', head: 7, sharded: true }),
      );
      // This process's own commit, heard back: its bus had it already.
      await publisher.publish(keys.commits, JSON.stringify({ origin: 'this-process', slug: 'ownroom', head: 1 }));
      await eventually(() => counted.length === 3);
      expect(counted).toEqual(['broadcast', 'broadcast', 'broadcast']);
      expect(commits).toEqual(['oldroom']);
    } finally {
      publisher.disconnect();
      await notices.close();
      await topology.stop();
    }
  });
});
