/**
 * A private, throwaway redis-server for tests: free port, no persistence, its own temp dir.
 * The machine's own Redis (6379) is never used, so tests cannot touch real data.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './child-service.js';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killWithTestProcess } from './kill-with-test-process.js';

/**
 * The two stores a suite runs on: the embedded one, and Redis on `redis` (a key prefix of its own for
 * each service started, and a signing key seed the processes of one service can share). Where no
 * redis-server is installed the Redis entry is there all the same: the suite skips it.
 */
export function storeMatrix(redis: TestRedisServer | null, prefix: string) {
  return [
    { store: 'sqlite', env: (): Record<string, string> => ({}) },
    {
      store: 'redis',
      env: (): Record<string, string> => ({
        STORE: 'redis',
        REDIS_URL: redis?.url ?? '',
        REDIS_KEY_PREFIX: `${prefix}-${randomUUID().slice(0, 8)}:`,
        CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      }),
    },
  ] as const;
}

export interface TestRedisServer {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** Stops the server; its data is gone (nothing is persisted). */
  stop(): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open and nothing answers, as in a stalled host. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
  /** SIGKILLs the server; with `aof`, its data directory stays for the next restart() to recover. */
  crash(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Starts a redis-server, or returns null when none is installed so suites can skip.
 * Under CI (CI=true) a missing redis-server is a failure, not a skip.
 */
export async function startRedisServer(options: { aof?: boolean } = {}): Promise<TestRedisServer | null> {
  const binary = findOnPath('redis-server');
  if (binary === null) {
    if (process.env.CI === 'true') throw new Error('redis-server is not on PATH, and CI requires the Redis suites');
    return null;
  }
  let port = 0;
  let running: Running | null = null;
  // With AOF every write is fsynced before Redis answers it, and a restart replays the log.
  const persistence = options.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : [];
  let keptDir: string | null = null;
  // Another process may grab the free port before redis-server binds it; then try another one.
  for (let attempt = 1; running === null; attempt++) {
    port = await freePort();
    running = await launch(binary, port, persistence).catch((error: unknown) => {
      if (attempt >= 3) throw error;
      return null;
    });
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (running) await terminate(running);
      running = null;
    },
    async restart() {
      if (running) await terminate(running);
      running = await launch(binary, port, persistence, keptDir ?? undefined);
      keptDir = null;
    },
    async crash() {
      if (!running) return;
      const { child, dir } = running;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      running = null;
      if (options.aof) keptDir = dir;
      else rmSync(dir, { recursive: true, force: true });
    },
    pause() {
      running?.child.kill('SIGSTOP');
    },
    resume() {
      running?.child.kill('SIGCONT');
    },
  };
}

export interface Running {
  child: ChildProcess;
  dir: string;
}

export async function launch(
  binary: string,
  port: number,
  extraArgs: string[] = [],
  existingDir?: string,
): Promise<Running> {
  const dir = existingDir ?? mkdtempSync(join(tmpdir(), 'conclave-redis-'));
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // A test process that exits early must not leave a server behind.
  killWithTestProcess(child);
  // redis-server logs to stdout; keep it to explain a failed start.
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const giveUpAt = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < giveUpAt) {
    if (child.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server exited at startup:\n${log}`);
    }
    if (await answersPing(port)) return { child, dir };
    await sleep(25);
  }
  await terminate({ child, dir });
  throw new Error(`redis-server on port ${port} did not answer PING within ${STARTUP_TIMEOUT_MS} ms`);
}

export async function terminate({ child, dir }: Running): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export function findOnPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}
