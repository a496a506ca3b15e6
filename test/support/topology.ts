/**
 * Real deployments in miniature: service processes started the way `npm start` starts them, behind
 * Debian's nginx rendered from deploy/nginx/nginx.conf.template — the file docker-compose.yml
 * mounts — so the load balancer configuration that ships is the one these tests exercise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ChildService, freePort, spawnService } from './child-service.js';
import { eventually } from './engagement.js';
import { killWithTestProcess } from './kill-with-test-process.js';

export const NGINX = '/usr/sbin/nginx';
export const hasNginx = existsSync(NGINX);
if (!hasNginx && process.env.CI === 'true') throw new Error(`${NGINX} is missing, and CI requires the topology tests`);

const TEMPLATE = new URL('../../deploy/nginx/nginx.conf.template', import.meta.url);

/** What envsubst does to the template in the container, for the variables it names. */
export async function renderNginxConfig(values: Record<string, string>): Promise<string> {
  const template = await readFile(TEMPLATE, 'utf8');
  return template.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

export interface Nginx {
  base: string;
  stop(): Promise<void>;
}

/** The template rendered for these upstreams into a fresh run directory, as docker-compose.yml renders it. */
async function writeNginxConfig(upstreams: string[], port: number): Promise<{ runDir: string; file: string }> {
  const runDir = await mkdtemp(path.join(tmpdir(), 'conclave-nginx-'));
  // Run as root, nginx's workers are `nobody`: they must reach the temp directories it creates here
  // (MCP bodies too big for memory are buffered to a file, deploy/nginx/nginx.conf.template).
  await chmod(runDir, 0o755);
  const config = await renderNginxConfig({
    NGINX_PORT: `127.0.0.1:${port}`,
    NGINX_RUN_DIR: runDir,
    CONCLAVE_UPSTREAMS: upstreams.map((upstream) => `server ${upstream} max_fails=1 fail_timeout=1s;`).join('\n    '),
  });
  const file = path.join(runDir, 'nginx.conf');
  await writeFile(file, config);
  return { runDir, file };
}

/** `nginx -t` on the rendered template: whether nginx accepts it, and what it said. */
export async function checkNginxConfig(upstreams: string[]): Promise<{ ok: boolean; output: string }> {
  const { runDir, file } = await writeNginxConfig(upstreams, await freePort());
  try {
    const child = spawn(NGINX, ['-t', '-p', runDir, '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return { ok: code === 0, output };
  } finally {
    await rm(runDir, { recursive: true, force: true });
  }
}

export async function startNginx(upstreams: string[]): Promise<Nginx> {
  const port = await freePort();
  const { runDir, file } = await writeNginxConfig(upstreams, port);
  const child: ChildProcess = spawn(NGINX, ['-p', runDir, '-c', file, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  });
  killWithTestProcess(child);
  const base = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${log}`);
    return fetch(`${base}/healthz`).then(
      () => true,
      () => false,
    );
  }, 10_000);
  return {
    base,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(runDir, { recursive: true, force: true });
    },
  };
}

/** N service processes on fixed ports (a restarted process comes back on its own port), one store. */
export interface Fleet {
  readonly ports: number[];
  readonly processes: (ChildService | null)[];
  /** SIGKILLs process i. */
  kill(i: number): void;
  /** Starts process i again on its port. */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startFleet(
  count: number,
  env: Record<string, string>,
  /** A command each process is started through (spawnService's `wrapper`), e.g. `['nice', '-n', '10']`. */
  wrapper?: string[],
): Promise<Fleet> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  // One deployment has one public address (PUBLIC_BASE_URL, as docker-compose.yml sets it): every
  // process signs a room's receipts for the same room URL, whichever seals them, so a verifier bound
  // to the room accepts them all. Left unset, each process would sign under its own HOST:PORT.
  const shared = { PUBLIC_BASE_URL: 'http://conclave.test', ...env };
  const spawnOne = (port: number) => spawnService(shared, { port, ...(wrapper ? { wrapper } : {}) });
  const processes: (ChildService | null)[] = await Promise.all(ports.map(spawnOne));
  return {
    ports,
    processes,
    kill(i) {
      processes[i]?.child.kill('SIGKILL');
    },
    async restart(i) {
      const old = processes[i];
      if (old) {
        if (old.child.exitCode === null && old.child.signalCode === null) {
          await new Promise((resolve) => old.child.once('exit', resolve));
        }
        await old.stop();
      }
      processes[i] = null;
      processes[i] = await spawnOne(ports[i]!);
    },
    async stop() {
      await Promise.all(processes.map((process) => process?.stop()));
    },
  };
}
