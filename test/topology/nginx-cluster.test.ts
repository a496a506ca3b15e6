/**
 * R7: two service processes behind nginx on a Redis Cluster of 3 masters + 3 replicas, every room
 * write acknowledged only once a replica has it (REDIS_WAIT_REPLICAS=1). A master is killed under
 * load: its replica is promoted, writes to its slots resume, the killed node comes back as a replica,
 * and nothing acknowledged is missing.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, newLedger, percentile, runRoom } from '../support/ledger.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { type Fleet, hasNginx, type Nginx, startFleet, startNginx } from '../support/topology.js';

const cluster: TestRedisCluster | null = hasNginx ? await startRedisCluster({ nodeTimeoutMs: 1000 }) : null;

describe.skipIf(!hasNginx || cluster === null)('two processes behind nginx on a Redis Cluster', () => {
  let fleet: Fleet;
  let nginx: Nginx;
  const prefix = `r7-${randomUUID().slice(0, 8)}:`;

  beforeAll(async () => {
    fleet = await startFleet(2, {
      STORE: 'redis',
      REDIS_URL: cluster!.url,
      REDIS_KEY_PREFIX: prefix,
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '1000',
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
      RATE_LIMIT_ISSUER_PER_MIN: '0',
      RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
      RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
      LOG_LEVEL: 'fatal',
    });
    nginx = await startNginx(fleet.ports.map((port) => `127.0.0.1:${port}`));
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await fleet?.stop();
    await cluster?.stop();
  });

  it('R7: a master killed under load; a replica takes over and no acknowledged write is missing', async () => {
    const ledger = newLedger();
    const until = Date.now() + 12_000;
    const load = Promise.all(Array.from({ length: 8 }, () => runRoom(ledger, () => nginx.base, until)));
    await sleep(3_000);
    const room = ledger.rooms[0]!;
    const victim = await cluster!.masterOf(`${prefix}room:{${room.slug}}`);
    const before = ledger.acknowledged;
    await cluster!.kill(victim);
    const killedAt = Date.now();
    // The node comes back (as an orchestrator would restart it) and rejoins as the new master's replica.
    await sleep(3_000);
    await cluster!.restart(victim);
    await cluster!.healthy(30_000);
    const healedMs = Date.now() - killedAt;
    await load;
    const { problems, receipts } = await audit(ledger, nginx.base);
    const promoted = await cluster!.masterOf(`${prefix}room:{${room.slug}}`);
    console.log(
      `R7: master :${victim} killed after ${before} acknowledged writes; slots now served by :${promoted}; cluster whole again ` +
        `${healedMs} ms after the kill; ${ledger.acknowledged} writes acknowledged over ${ledger.rooms.length} rooms; ` +
        `${problems.length} problems ${JSON.stringify(problems.slice(0, 3))}, ${receipts} receipts verified; writes that needed a retry: ${ledger.recoveries.length}, ` +
        `recovered in p50 ${percentile(ledger.recoveries, 50)} / max ${Math.max(0, ...ledger.recoveries)} ms; ` +
        `failed attempts by status ${JSON.stringify(ledger.failures)}`,
    );
    expect(promoted).not.toBe(victim);
    expect(problems).toEqual([]);
  }, 120_000);
});
