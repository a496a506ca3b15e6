/**
 * Three service processes behind nginx (the shipped template) on one Redis with AOF
 * (`appendfsync always`), driven by a mixed load that keeps books, through real faults:
 * - R1: a process is kill -9ed and restarted every few seconds (TOPOLOGY_SECONDS of load, 12 in
 *   `npm test`; `.ci/run` also runs 60 s with a kill every ~10 s);
 * - a process killed while it holds rooms: those rooms take writes again within the lock TTL;
 * - R6: a process frozen (SIGSTOP) past the lock TTL in the middle of writes while another keeps
 *   writing the room: its late commit is refused by the fence, and the chain never forks;
 * - R2: Redis paused (TOPOLOGY_PAUSE_MS: 3 s in `npm test`, 10 s in the long run), then killed and
 *   restarted from its AOF: 503 envelopes with Retry-After within the command timeout (the default
 *   2 s), automatic recovery, nothing acknowledged lost.
 * After each: every acknowledged write is present exactly once, seqs are contiguous, chains verify.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, newLedger, percentile, runRoom, write } from '../support/ledger.js';
import { startRedisServer } from '../support/redis-server.js';
import { type Fleet, hasNginx, type Nginx, startFleet, startNginx } from '../support/topology.js';

const SECONDS = Number(process.env.TOPOLOGY_SECONDS ?? 12);
const KILL_EVERY_MS = Number(process.env.TOPOLOGY_KILL_EVERY_MS ?? (SECONDS >= 60 ? 10_000 : 4_000));
/** How long R2 freezes Redis (10 s in the long run). */
const PAUSE_MS = Number(process.env.TOPOLOGY_PAUSE_MS ?? 3_000);

const redis = hasNginx ? await startRedisServer({ aof: true }) : null;

describe.skipIf(!hasNginx || redis === null)('three processes behind nginx on one Redis (AOF)', () => {
  let fleet: Fleet;
  let nginx: Nginx;
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `topology-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
    RATE_LIMIT_CREATE_PER_HOUR: '0',
    RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
    RATE_LIMIT_ISSUER_PER_MIN: '0',
    RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
    RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
    LOG_LEVEL: 'error',
  };

  beforeAll(async () => {
    fleet = await startFleet(3, env);
    nginx = await startNginx(fleet.ports.map((port) => `127.0.0.1:${port}`));
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await fleet?.stop();
    await redis?.stop();
  });

  it(`R1: ${SECONDS} s of mixed load while a process is kill -9ed every ${KILL_EVERY_MS / 1000} s`, async () => {
    const ledger = newLedger();
    const until = Date.now() + SECONDS * 1000;
    const load = Promise.all(Array.from({ length: 12 }, () => runRoom(ledger, () => nginx.base, until)));
    let kills = 0;
    const restarts: number[] = [];
    while (Date.now() + KILL_EVERY_MS / 2 < until) {
      await sleep(KILL_EVERY_MS / 2);
      const victim = kills % 3;
      fleet.kill(victim);
      kills++;
      const started = Date.now();
      await fleet.restart(victim);
      restarts.push(Date.now() - started);
      await sleep(KILL_EVERY_MS / 2);
    }
    await load;
    const { problems, receipts } = await audit(ledger, nginx.base);
    console.log(
      `R1: ${ledger.acknowledged} writes acknowledged in ${SECONDS} s over ${ledger.rooms.length} rooms, ${kills} kill -9s ` +
        `(restart ${Math.max(...restarts)} ms at most); lost 0 of them: ${problems.length} problems; ${receipts} receipts verified; ` +
        `writes that needed a retry: ${ledger.recoveries.length}, recovered in p50 ${percentile(ledger.recoveries, 50)} / ` +
        `max ${Math.max(0, ...ledger.recoveries)} ms; failed attempts by status ${JSON.stringify(ledger.failures)}`,
    );
    expect(problems).toEqual([]);
    expect(kills).toBeGreaterThan(0);
    // A write caught by a kill is acknowledged again once the dead process's room locks lapse (1.5 s).
    expect(Math.max(0, ...ledger.recoveries)).toBeLessThan(3_000);
  }, 180_000);

  it("a killed process's rooms take writes again within the lock TTL", async () => {
    const ledger = newLedger();
    const direct = `http://127.0.0.1:${fleet.ports[0]}`;
    // Rooms busy on process 0 alone, so it holds their locks when it dies.
    const rooms = await Promise.all(
      Array.from({ length: 8 }, () =>
        write(ledger, () => direct, '/api/rooms', { question: 'Held?', options: ['a', 'b'], config: {} }),
      ),
    );
    let stop = false;
    const busy = rooms.map(async (room) => {
      while (!stop) {
        await fetch(`${direct}/api/rooms/${room.slug}/discuss`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${room.creator_token}` },
          body: JSON.stringify({ body: 'busy' }),
        }).catch(() => undefined);
      }
    });
    await sleep(300);
    fleet.kill(0);
    const killedAt = Date.now();
    stop = true;
    const back = await Promise.all(
      rooms.map(async (room) => {
        await write(ledger, () => nginx.base, `/api/rooms/${room.slug}/discuss`, { body: 'after' }, room.creator_token);
        return Date.now() - killedAt;
      }),
    );
    await Promise.all(busy);
    console.log(
      `after kill -9: the dead process's 8 rooms took writes again in ${Math.min(...back)}–${Math.max(...back)} ms`,
    );
    expect(Math.max(...back)).toBeLessThan(2_000);
    // The survivors' metrics saw those lock waits.
    const scraped = await Promise.all(
      [1, 2].map(async (i) => (await fetch(`http://127.0.0.1:${fleet.ports[i]}/metrics`)).text()),
    );
    const waits = scraped.map((text) => Number(text.match(/^conclave_room_lock_wait_seconds_count (\d+)/m)?.[1] ?? 0));
    expect(waits[0]! + waits[1]!).toBeGreaterThan(0);
    await fleet.restart(0);
  }, 60_000);

  it('R6: a process frozen past the lock TTL mid-write cannot fork the chain', async () => {
    const ledger = newLedger();
    const frozen = fleet.processes[1]!;
    const a = `http://127.0.0.1:${fleet.ports[1]}`;
    const b = `http://127.0.0.1:${fleet.ports[2]}`;
    const room = await write(ledger, () => b, '/api/rooms', {
      question: 'Fork?',
      options: ['a', 'b'],
      config: { early_close: true, settle_window: 0 },
    });
    const joined = await write(ledger, () => b, `/api/rooms/${room.slug}/join`, { display_name: 'other' });
    // A burst of writes on A; A is frozen while some of them are in its hands.
    const onA = Array.from({ length: 20 }, (_, i) =>
      fetch(`${a}/api/rooms/${room.slug}/discuss`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${room.creator_token}` },
        body: JSON.stringify({ body: `from A ${i}` }),
      }).then(
        async (response) => ({ status: response.status, body: (await response.json()) as any }),
        () => ({ status: 0, body: null as any }),
      ),
    );
    await sleep(5);
    frozen.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    // B keeps writing the room (the lock A held lapses after its TTL) and decides it.
    const said: string[] = [];
    let firstOnB = 0;
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const text = `from B ${i}`;
      await write(ledger, () => b, `/api/rooms/${room.slug}/discuss`, { body: text }, joined.participant_token);
      said.push(text);
      if (i === 0) firstOnB = Date.now() - started;
    }
    for (const token of [room.creator_token, joined.participant_token]) {
      await write(ledger, () => b, `/api/rooms/${room.slug}/choose`, { choice: 'a' }, token);
    }
    await sleep(Math.max(0, 2_000 - (Date.now() - frozenAt)));
    frozen.child.kill('SIGCONT');
    const answers = await Promise.all(onA);
    const acknowledgedOnA = answers.filter((answer) => answer.status === 200).length;
    const refusedOnA = answers.filter((answer) => answer.status !== 200);

    const events = (await (
      await fetch(`${b}/api/rooms/${room.slug}/events?limit=1000`, {
        headers: { authorization: `Bearer ${room.creator_token}` },
      })
    ).json()) as any;
    const seqs = events.events.map((e: any) => e.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
    const posted = events.events.filter((e: any) => e.event_type === 'discussion.posted').map((e: any) => e.data.body);
    // Every write A acknowledged is there once; one A answered 503 for may be there (at most once):
    // 503 promises nothing either way, which is why clients retry with an Idempotency-Key.
    answers.forEach((answer, i) => {
      const times = posted.filter((body: string) => body === `from A ${i}`).length;
      if (answer.status === 200) expect(times, `from A ${i}`).toBe(1);
      else expect(times, `from A ${i}`).toBeLessThanOrEqual(1);
    });
    for (const text of said) expect(posted.filter((body: string) => body === text)).toHaveLength(1);
    const outcome = (await (
      await fetch(`${b}/api/rooms/${room.slug}/outcome`, { headers: { authorization: `Bearer ${room.creator_token}` } })
    ).json()) as any;
    expect(outcome.decisions[0].receipt_hash).toMatch(/^sha256:/);
    console.log(
      `R6: A frozen for ${Date.now() - frozenAt} ms; B's first write after the freeze took ${firstOnB} ms; ` +
        `A acknowledged ${acknowledgedOnA} of 20, refused ${refusedOnA.length} ` +
        `(${[...new Set(refusedOnA.map((r) => r.body?.error?.code ?? r.status))].join(', ')}); chain of ${seqs.length} events, no fork`,
    );
  }, 60_000);

  it(`R2: Redis paused ${PAUSE_MS / 1000} s, then killed and restarted from its AOF: 503s, recovery, nothing lost`, async () => {
    const ledger = newLedger();
    const until = Date.now() + PAUSE_MS + 6_000;
    const load = Promise.all(Array.from({ length: 6 }, () => runRoom(ledger, () => nginx.base, until)));
    await sleep(1_500);
    redis!.pause();
    const pausedAt = Date.now();
    const during = await fetch(`${nginx.base}/api/rooms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'During?', options: ['a', 'b'] }),
    });
    const duringMs = Date.now() - pausedAt;
    const envelope = (await during.json()) as any;
    const retryAfter = during.headers.get('retry-after');
    await sleep(Math.max(0, PAUSE_MS - (Date.now() - pausedAt)));
    redis!.resume();
    await sleep(1_500);
    await redis!.crash();
    const crashedAt = Date.now();
    await sleep(1_000);
    await redis!.restart();
    const restartedAt = Date.now();
    const probe = await write(ledger, () => nginx.base, '/api/rooms', { question: 'After?', options: ['a', 'b'] });
    const recoveredMs = Date.now() - restartedAt;
    await load;
    const { problems, receipts } = await audit(ledger, nginx.base);
    console.log(
      `R2: during the pause a write answered ${during.status} ${envelope.error?.code} in ${duringMs} ms (Retry-After ${retryAfter}); ` +
        `paused ${PAUSE_MS} ms; killed, down ${restartedAt - crashedAt} ms; first write after the restart acknowledged in ${recoveredMs} ms; ` +
        `${ledger.acknowledged} writes acknowledged, ${problems.length} problems, ${receipts} receipts verified`,
    );
    expect(during.status).toBe(503);
    expect(envelope.error.code).toBeDefined();
    expect(retryAfter).not.toBeNull();
    expect(duringMs).toBeLessThan(3_000);
    expect(probe.slug).toBeDefined();
    expect(problems).toEqual([]);
  }, 90_000);
});
