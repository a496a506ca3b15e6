/**
 * A private Redis Cluster for tests: three masters and three replicas (redis-server with
 * cluster-enabled, joined by `redis-cli --cluster create`), every node with AOF `appendfsync always`,
 * on free loopback ports. Nodes can be killed and restarted to drive failovers.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { findOnPath, launch, type Running, terminate } from './redis-server.js';

const run = promisify(execFile);

export interface TestRedisCluster {
  /** Every node, comma-separated: what REDIS_URL takes. */
  readonly url: string;
  readonly ports: number[];
  /** The node currently serving `key` as master. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs one node; its directory (AOF, nodes.conf) stays for restart(). */
  kill(port: number): Promise<void>;
  /** Starts a killed node again on its port and directory: it rejoins, as a replica if it was replaced. */
  restart(port: number): Promise<void>;
  /** Waits until every slot is served, the cluster reports ok, and every master's replica is in sync. */
  healthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Both the port and its cluster-bus port (port + 10000) must be free. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await isFree(port)) && (await isFree(port + 10_000))) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

/** Starts the cluster, or returns null without redis-server/redis-cli (a failure under CI). */
export async function startRedisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster | null> {
  const binary = findOnPath('redis-server');
  if (binary === null || findOnPath('redis-cli') === null) {
    if (process.env.CI === 'true')
      throw new Error('redis-server and redis-cli are required for the Redis Cluster suites');
    return null;
  }
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < 6; i++) ports.push(await freeClusterPort(taken));
  const nodes = new Map<number, Running>();
  const killed = new Map<number, string>();
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(options.nodeTimeoutMs ?? 1000),
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
  ];
  await Promise.all(
    ports.map(async (port) => {
      nodes.set(port, await launch(binary, port, args));
    }),
  );
  await run(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'],
    { timeout: 30_000 },
  );
  const cluster: TestRedisCluster = {
    url: ports.map((port) => `redis://127.0.0.1:${port}`).join(','),
    ports,
    async masterOf(key) {
      const slot = (await redisCli(ports.find((p) => nodes.has(p))!, 'CLUSTER', 'KEYSLOT', key)).trim();
      const nodesText = await redisCli(ports.find((p) => nodes.has(p))!, 'CLUSTER', 'NODES');
      for (const line of nodesText.trim().split('\n')) {
        const fields = line.split(' ');
        if (!fields[2]?.includes('master') || fields[2].includes('fail')) continue;
        const port = Number(fields[1]!.split(':')[1]!.split('@')[0]);
        for (const range of fields.slice(8)) {
          const [from, to] = range.split('-').map(Number);
          if (Number(slot) >= from! && Number(slot) <= (to ?? from)!) return port;
        }
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    async kill(port) {
      const node = nodes.get(port);
      if (!node) return;
      const exited = new Promise((resolve) => node.child.once('exit', resolve));
      node.child.kill('SIGKILL');
      await exited;
      nodes.delete(port);
      killed.set(port, node.dir);
    },
    async restart(port) {
      const dir = killed.get(port);
      if (dir === undefined) return;
      killed.delete(port);
      nodes.set(port, await launch(binary, port, args, dir));
    },
    async healthy(timeoutMs = 20_000) {
      const giveUpAt = Date.now() + timeoutMs;
      for (;;) {
        const states = await Promise.all(
          [...nodes.keys()].map((port) => redisCli(port, 'CLUSTER', 'INFO').catch(() => '')),
        );
        if (states.every((info) => info.includes('cluster_state:ok'))) {
          const replication = await Promise.all(
            [...nodes.keys()].map((port) => redisCli(port, 'INFO', 'replication').catch(() => '')),
          );
          const masters = replication.filter((info) => info.includes('role:master'));
          // With a node killed, a master promoted in its place has no replica left to wait for.
          const synced = (info: string) =>
            /slave0:.*state=online/.test(info) || (nodes.size < 6 && /connected_slaves:0/.test(info));
          if (masters.length === 3 && masters.every(synced)) return;
        }
        if (Date.now() > giveUpAt) throw new Error('the Redis Cluster did not become healthy');
        await sleep(100);
      }
    },
    async stop() {
      await Promise.all([...nodes.values()].map((node) => terminate(node)));
      nodes.clear();
      for (const dir of killed.values()) rmSync(dir, { recursive: true, force: true });
      killed.clear();
    },
  };
  await cluster.healthy();
  return cluster;
}
