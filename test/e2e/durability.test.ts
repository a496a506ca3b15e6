/**
 * An acknowledged write survives `kill -9`: a real server process is killed right after a 2xx and
 * restarted on the same data; the write, its events and its receipts are all there. Both stores.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { call } from '../support/service.js';
import { BUILT_SERVICE } from '../support/built.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function startProcess(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BUILT_SERVICE], {
    cwd: process.cwd(),
    // No start-up warm-up (src/warm-up.ts): what is checked is what survives the kill, and every restart would pay it.
    env: { ...process.env, WARMUP_TURNS: '0', ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('server did not become ready');
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function durabilitySuite(name: string, envFor: () => Record<string, string>) {
  it(`keeps every acknowledged write across kill -9 (${name})`, async () => {
    const env = envFor();
    let { child, base } = await startProcess(env);
    const created = await call(base, 'POST', '/api/rooms', {
      body: { question: 'Survive?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
    });
    const { slug, creator_token: token } = created.body;
    const chosen = await call(base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'yes' } });
    expect(chosen.body.status).toBe('resolved');
    await killHard(child);

    ({ child, base } = await startProcess(env));
    try {
      const outcome = await call(base, 'GET', `/api/rooms/${slug}/outcome`, { token });
      expect(outcome.status).toBe(200);
      expect(outcome.body.resolved_winner).toBe('yes');
      expect(outcome.body.receipt_hash).toMatch(/^sha256:/);
      const said = await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body: 'still here' } });
      expect(said.status).toBe(200);
      await killHard(child);
      ({ child, base } = await startProcess(env));
      const full = await call(base, 'GET', `/api/rooms/${slug}?include=full`, { token });
      expect(full.body.discussion.map((m: any) => m.body)).toEqual(['still here']);
      const delta = await call(base, 'GET', `/api/rooms/${slug}?since=0`, { token });
      expect(delta.body.new.map((e: any) => e.type)).toEqual([
        'joined',
        'decision_opened',
        'choice_submitted',
        'decision_resolved',
        'discussion',
      ]);
      const jwks = await call(base, 'GET', '/.well-known/jwks.json');
      expect(jwks.body.keys.map((k: any) => k.kid)).toContain(
        JSON.parse(Buffer.from(outcome.body.receipt_jws.split('.')[0], 'base64url').toString()).kid,
      );
    } finally {
      await killHard(child);
    }
  }, 60_000);
}

/**
 * Many rooms written concurrently (so commits share transactions), the process killed while writes
 * are in flight: every write that was answered 2xx is there after the restart, and each room's
 * event log is contiguous.
 */
function concurrentLoadSuite(name: string, envFor: () => Record<string, string>) {
  it(`keeps every acknowledged write of a concurrent load across kill -9 (${name})`, async () => {
    const env = envFor();
    let { child, base } = await startProcess(env);
    const rooms = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const created = await call(base, 'POST', '/api/rooms', {
          body: { question: `Room ${i}?`, options: ['yes', 'no'], config: { max_total_deliberation_messages: 5000 } },
        });
        return { slug: created.body.slug as string, token: created.body.creator_token as string };
      }),
    );
    const acknowledged = new Map<string, Set<string>>(rooms.map((r) => [r.slug, new Set()]));
    let acks = 0;
    let killed = false;
    const writer = async (w: number) => {
      for (let n = 0; !killed; n++) {
        const room = rooms[(w * 7 + n) % rooms.length]!;
        const text = `w${w}-${n}`;
        try {
          const said = await call(base, 'POST', `/api/rooms/${room.slug}/discuss`, {
            token: room.token,
            body: { body: text },
          });
          if (said.status === 200) {
            acknowledged.get(room.slug)!.add(text);
            acks++;
          }
        } catch {
          return; // the process is gone
        }
      }
    };
    const writers = Array.from({ length: 24 }, (_, w) => writer(w));
    // Kill once enough writes were answered, with the writers still sending (or give up after 30 s).
    const giveUpAt = Date.now() + 30_000;
    while (acks < 400 && Date.now() < giveUpAt) await new Promise((r) => setImmediate(r));
    expect(acks).toBeGreaterThanOrEqual(400);
    killed = true;
    await killHard(child);
    await Promise.all(writers);

    ({ child, base } = await startProcess(env));
    try {
      for (const room of rooms) {
        const events = await call(base, 'GET', `/api/rooms/${room.slug}/events?since_seq=0&limit=500`, {
          token: room.token,
        });
        const seqs = events.body.events.map((e: any) => e.seq);
        expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
        const full = await call(base, 'GET', `/api/rooms/${room.slug}?include=full`, { token: room.token });
        const stored = new Set(full.body.discussion.map((m: any) => m.body));
        for (const text of acknowledged.get(room.slug)!) expect(stored.has(text), `${room.slug}: ${text}`).toBe(true);
      }
    } finally {
      await killHard(child);
    }
  }, 90_000);
}

describe('durability across kill -9', () => {
  let dataDir = '';
  let redis: TestRedisServer | null = null;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-kill-'));
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  durabilitySuite('sqlite', () => ({ DATA_DIR: path.join(dataDir, 'sqlite') }));
  concurrentLoadSuite('sqlite', () => ({ DATA_DIR: path.join(dataDir, 'sqlite-load') }));
  durabilitySuite('redis', () => {
    if (!redis) throw new Error('redis-server is required for this test');
    return { STORE: 'redis', REDIS_URL: redis.url, DATA_DIR: path.join(dataDir, 'redis') };
  });
});
