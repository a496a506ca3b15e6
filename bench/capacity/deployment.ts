/**
 * The deployment the capacity case measures (docs/operators.md, Capacity): a Redis Cluster of three
 * masters and three replicas (AOF `appendfsync always`, test/support/redis-cluster.ts) and several
 * built service processes on it, each a child process as `npm start` runs it, with replica-acknowledged
 * writes (`REDIS_WAIT_REPLICAS=1`), as docs/operators.md recommends for a Cluster.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type ChildService, spawnService } from '../../test/support/child-service.js';
import { startRedisCluster, type TestRedisCluster } from '../../test/support/redis-cluster.js';
import { BENCH_ENV } from '../bench-service.js';
import { shippedWarmUpEnv } from '../shipped-warm-up.js';

export const KEY_PREFIX = 'conclave:';

export interface Deployment {
  cluster: TestRedisCluster;
  processes: ChildService[];
  /** The three masters' ports, as the cluster started. */
  masters: number[];
  /** The service environment every process runs with (a step starting its own process reuses it). */
  env: Record<string, string>;
  /** Set once stopDeployment begins: exits from then on are expected. */
  stopping: boolean;
}

/** Starts the cluster and `count` service processes; null without redis-server. */
export async function startDeployment(count: number): Promise<Deployment | null> {
  const cluster = await startRedisCluster();
  if (cluster === null) return null;
  const env = {
    ...BENCH_ENV,
    STORE: 'redis',
    REDIS_URL: cluster.url,
    REDIS_WAIT_REPLICAS: '1',
    // One signing key for every replica, as docs/operators.md requires: the log's checkpoints verify under one key.
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    // ...and one public origin, which names the log its checkpoints sign (docs/transparency-log.md).
    PUBLIC_BASE_URL: 'http://conclave.capacity.test',
    LOG_LEVEL: 'silent',
    // Warmed as shipped: the CPU a write costs is measured on processes that start as in production.
    ...shippedWarmUpEnv(),
  };
  try {
    const processes = await Promise.all(Array.from({ length: count }, () => spawnService(env)));
    const deployment = { cluster, processes, masters: await masterPorts(cluster), env, stopping: false };
    // A process that dies mid-run fails the next step with a refused connection: say which and how.
    for (const [i, { child }] of processes.entries()) {
      child.once('exit', (code, signal) => {
        if (!deployment.stopping) console.error(`capacity: service process ${i + 1} exited (${signal ?? code})`);
      });
    }
    return deployment;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

export async function stopDeployment(deployment: Deployment): Promise<void> {
  deployment.stopping = true;
  await Promise.all(deployment.processes.map((p) => p.stop()));
  await deployment.cluster.stop();
}

async function masterPorts(cluster: TestRedisCluster): Promise<number[]> {
  const masters: number[] = [];
  for (const port of cluster.ports) {
    const node = new Redis(port, '127.0.0.1');
    try {
      if ((await node.info('replication')).includes('role:master')) masters.push(port);
    } finally {
      node.disconnect();
    }
  }
  return masters;
}

/** One field of each master's INFO, summed (e.g. `used_memory`). */
export async function sumOverMasters(deployment: Deployment, section: string, fields: string[]): Promise<number> {
  let total = 0;
  for (const port of deployment.masters) {
    const node = new Redis(port, '127.0.0.1');
    try {
      const info = await node.info(section);
      for (const field of fields) total += Number(new RegExp(`^${field}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
    } finally {
      node.disconnect();
    }
  }
  return total;
}

/** Calls of each command the masters have served so far (INFO commandstats), the bench's own reads left out. */
export async function commandCalls(deployment: Deployment): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const port of deployment.masters) {
    const node = new Redis(port, '127.0.0.1');
    try {
      for (const [, command, count] of (await node.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        if (['info', 'cluster', 'memory', 'scan'].includes(command!)) continue;
        calls.set(command!, (calls.get(command!) ?? 0) + Number(count));
      }
    } finally {
      node.disconnect();
    }
  }
  return calls;
}

/** Redis CPU seconds the masters have used so far: in user space, and in the kernel (AOF writes and fsyncs, sockets). */
export async function mastersCpuSeconds(deployment: Deployment): Promise<{ user: number; sys: number }> {
  return {
    user: await sumOverMasters(deployment, 'cpu', ['used_cpu_user']),
    sys: await sumOverMasters(deployment, 'cpu', ['used_cpu_sys']),
  };
}

/** Runs `work(i)` for i in [0, count) with at most `parallel` at once. */
export async function inParallel(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
