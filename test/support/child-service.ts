/**
 * The service as a separate node process started the way `npm start` runs it (the built
 * dist/src/main.js, test/support/built.ts), on a free loopback port with its own data directory:
 * what crosses processes, signals and log output is only observable this way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './engagement.js';
import { killWithTestProcess } from './kill-with-test-process.js';
import { BUILT_SERVICE, repoRoot } from './built.js';

export interface ChildService {
  base: string;
  child: ChildProcess;
  dataDir: string;
  /** Everything the process wrote to stdout and stderr so far (when started with capture). */
  output(): string;
  stop(): Promise<void>;
}

export async function spawnService(
  env: Record<string, string>,
  options: {
    capture?: boolean;
    port?: number;
    dataDir?: string;
    /** A command the node process is started through, e.g. `['prlimit', '--nofile=1024:1024']`. */
    wrapper?: string[];
    /**
     * Hold the app's modules until this file exists (test/support/hold-app/): the process answers
     * from its early server (src/http/early-server.ts) until then, and this resolves once it listens.
     */
    holdAppUntil?: string;
  } = {},
): Promise<ChildService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'conclave-peer-')));
  const port = options.port ?? (await freePort());
  const entry = options.holdAppUntil ? HELD_ENTRY : BUILT_SERVICE;
  const [command, ...args] = [...(options.wrapper ?? []), process.execPath, entry];
  const child = spawn(command!, args, {
    cwd: repoRoot,
    // No start-up warm-up unless a test asks for it (src/warm-up.ts): it only adds seconds to every spawn here.
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      WARMUP_TURNS: '0',
      ...env,
      ...(options.holdAppUntil ? { HOLD_APP_UNTIL: options.holdAppUntil } : {}),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', options.capture ? 'pipe' : 'inherit', options.capture ? 'pipe' : 'inherit'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  killWithTestProcess(child);
  const base = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`the service process exited with ${child.exitCode}:\n${output}`);
    return options.holdAppUntil ? isLive(base) : isServing(base);
    // A fleet of three starting at once on a busy 2-core machine took over 30 s.
  }, 90_000);
  return {
    base,
    child,
    dataDir,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The built entry with its app's load held until a file exists (test/support/hold-app/entry.mjs). */
const HELD_ENTRY = path.join(repoRoot, 'test/support/hold-app/entry.mjs');

/** Liveness answers: from the moment the process listens, before its app has loaded (src/start.ts). */
export function isLive(base: string): Promise<boolean> {
  return fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  );
}

/**
 * The app answers: liveness alone says only that the process listens (its early server answers it
 * while the app loads); the signing keys are the app's, served as soon as it has taken the socket.
 */
export function isServing(base: string): Promise<boolean> {
  return fetch(`${base}/.well-known/jwks.json`).then(
    (r) => r.ok,
    () => false,
  );
}

/** Binds port 0 to let the OS pick a free port, then hands it over. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
