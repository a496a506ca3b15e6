/**
 * Fault: a Redis Cluster master killed under write load (docs/operators.md, Redis Cluster). Two
 * service processes, addressed directly, write to rooms spread over 3 masters (+ 3 replicas); one
 * master is SIGKILLed, its replica is promoted, and the node comes back as a replica. While the
 * slots move, clients meet MOVED/ASK redirections, CLUSTERDOWN and connections reset under a script:
 * each of those must answer 503 with Retry-After (a retry with the same Idempotency-Key is then
 * safe), never 500, and every acknowledged write must be there afterwards. Real processes on a real
 * cluster, so time is wall time here.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { audit, newLedger, runRoom } from '../support/ledger.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';

const cluster: TestRedisCluster | null = await startRedisCluster({ nodeTimeoutMs: 1000 });

describe.skipIf(cluster === null)('a Redis Cluster master killed under write load', () => {
  const processes: ChildService[] = [];
  const prefix = `failover-${randomUUID().slice(0, 8)}:`;
  beforeAll(async () => {
    const env = {
      STORE: 'redis',
      REDIS_URL: cluster!.url,
      REDIS_KEY_PREFIX: prefix,
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '1000',
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      // One deployment, one public address: receipts name the room by it, whichever process seals.
      PUBLIC_BASE_URL: 'http://conclave.test',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
      RATE_LIMIT_ISSUER_PER_MIN: '0',
      RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
      RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
      LOG_LEVEL: 'error',
    };
    // One after the other: two cold starts at once on a busy 2-core machine can outlast the start-up wait.
    for (let i = 0; i < 2; i++) processes.push(await spawnService(env, { capture: true }));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await cluster?.stop();
  });

  it('answers 503 with Retry-After while the slots move, never 500, and loses nothing acknowledged', async () => {
    const ledger = newLedger();
    let turn = 0;
    const base = () => processes[turn++ % processes.length]!.base;
    const until = Date.now() + 12_000;
    const load = Promise.all(Array.from({ length: 8 }, () => runRoom(ledger, base, until)));
    await sleep(3_000);
    const room = ledger.rooms[0]!;
    const victim = await cluster!.masterOf(`${prefix}room:{${room.slug}}`);
    const before = ledger.acknowledged;
    await cluster!.kill(victim);
    await sleep(3_000);
    await cluster!.restart(victim);
    await cluster!.healthy(30_000);
    await load;
    const { problems } = await audit(ledger, processes[0]!.base);
    const failed = processes
      .flatMap((p) => p.output().split('\n'))
      .filter((line) => line.includes('"status":500'))
      .slice(0, 5);
    console.log(
      `failover: master :${victim} killed after ${before} acknowledged writes; ${ledger.acknowledged} acknowledged; ` +
        `failed attempts by status ${JSON.stringify(ledger.failures)}; 500s logged: ${failed.join('\n')}`,
    );
    expect(ledger.failures['500'] ?? 0, failed.join('\n')).toBe(0);
    expect(ledger.failures['503 without Retry-After'] ?? 0).toBe(0);
    // The kill was felt: some attempt failed while the slots moved.
    expect(Object.keys(ledger.failures).length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  }, 120_000);
});
