/**
 * Configuration errors an operator can act on: every invalid variable at once, each with its name,
 * what is wrong with the value and a working example; start-up failures (the data directory, the
 * listen address) name the variable that explains them.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_EXAMPLES, ConfigError, loadConfig, trustProxyWarning } from '../../../src/config.js';
import { defaultBaseUrlWarning, isLoopbackHost, listenProblem, runServer } from '../../../src/server-process.js';
import { BUILT_SERVICE } from '../../support/built.js';

function problemsOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('loading the configuration', () => {
  it('reports every invalid variable at once, each with its value, the problem and an example', () => {
    const error = problemsOf({ PORT: 'abc', STORE: 'postgres', LOG_LEVEL: 'verbose', ROOM_CACHE_SIZE: '1.5' });
    expect(error.problems).toEqual([
      { variable: 'PORT', problem: '"abc" must be a number', example: '3000' },
      { variable: 'STORE', problem: '"postgres" must be one of sqlite, redis', example: 'redis' },
      {
        variable: 'LOG_LEVEL',
        problem: '"verbose" must be one of fatal, error, warn, info, debug, trace, silent',
        example: 'info',
      },
      { variable: 'ROOM_CACHE_SIZE', problem: '"1.5" must be a whole number', example: '1000' },
    ]);
    expect(error.message).toContain('Invalid configuration: 4 variables to fix');
    expect(error.message).toContain('  PORT: "abc" must be a number (example: PORT=3000)');
    expect(error.message).toContain('  STORE: "postgres" must be one of sqlite, redis (example: STORE=redis)');
  });

  it('states bounds and formats in words', () => {
    const error = problemsOf({ PORT: '70000', HEADERS_TIMEOUT_MS: '5', PUBLIC_BASE_URL: 'example.org' });
    expect(error.problems.map((p) => `${p.variable} ${p.problem}`)).toEqual([
      'PORT "70000" must be at most 65535',
      'HEADERS_TIMEOUT_MS "5" must be at least 1000',
      'PUBLIC_BASE_URL "example.org" must be an absolute URL',
    ]);
  });

  it('never echoes a credential, or a Redis URL that may carry one', () => {
    const error = problemsOf({
      CONCLAVE_ADMIN_TOKEN: 'short-secret',
      CONCLAVE_SIGNING_KEY_SEED: 'not-hex-seed',
      REDIS_URL: 'http://user:hunter2@redis',
    });
    expect(error.problems.map((p) => p.variable).sort()).toEqual([
      'CONCLAVE_ADMIN_TOKEN',
      'CONCLAVE_SIGNING_KEY_SEED',
      'REDIS_URL',
    ]);
    for (const secret of ['short-secret', 'not-hex-seed', 'hunter2']) expect(error.message).not.toContain(secret);
    expect(error.message).toContain('CONCLAVE_ADMIN_TOKEN: (value hidden) must be at least 32 characters');
    expect(error.message).toContain('REDIS_URL: (value hidden) an entry must use redis:// or rediss://');
  });

  it('gives an example for every variable, and each example is accepted', () => {
    for (const [variable, example] of Object.entries(CONFIG_EXAMPLES)) {
      // The credentials' examples are commands that make one: a value of that shape stands in.
      const value = example.startsWith('$(openssl rand -hex 32)') ? 'ab'.repeat(32) : example;
      expect(() => loadConfig({ [variable]: value }), `${variable}=${value}`).not.toThrow();
    }
  });
});

describe('starting the service', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const env = (extra: Record<string, string>) => ({
    DATA_DIR: path.join(dir, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    // Each case fails at listening, after the start-up warm-up (src/warm-up.ts) would have run.
    WARMUP_TURNS: '0',
    ...extra,
  });

  it('names DATA_DIR when it points at a file', async () => {
    const file = path.join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    await expect(runServer(env({ DATA_DIR: file }))).rejects.toThrow(
      `DATA_DIR: "${file}" is a file (or lies under one), not a directory`,
    );
    await expect(runServer(env({ DATA_DIR: path.join(file, 'below') }))).rejects.toThrow(/DATA_DIR: .* is a file/);
  });

  it('names HOST when it is not an address of this machine', async () => {
    // 192.0.2.0/24 is reserved for documentation: never assigned here, so bind fails locally.
    await expect(runServer(env({ HOST: '192.0.2.1' }))).rejects.toThrow(
      'HOST: "192.0.2.1" is not an address of this machine',
    );
  });

  it('names PORT when another process holds it', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    const port = (holder.address() as { port: number }).port;
    await expect(runServer(env({ PORT: String(port) }))).rejects.toThrow(`PORT: "${port}" is already in use`);
    await new Promise((resolve) => holder.close(resolve));
  });

  it('names HOST when its name does not resolve', () => {
    // The resolver is not on loopback here: the error getaddrinfo gives is reproduced instead.
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND conclave.invalid'), { code: 'ENOTFOUND' });
    const error = listenProblem(notFound, 'conclave.invalid', 3000) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('HOST: "conclave.invalid" does not resolve to an address');
    expect(error.message).toContain('(example: HOST=0.0.0.0)');
    const other = new Error('something else');
    expect(listenProblem(other, 'h', 1)).toBe(other);
  });
});

describe('the public base URL', () => {
  it('warns when it is unset and the service listens beyond loopback', () => {
    const warning = defaultBaseUrlWarning(loadConfig({ HOST: '0.0.0.0', PORT: '3000' }));
    expect(warning).toContain('PUBLIC_BASE_URL IS NOT SET while listening on 0.0.0.0');
    expect(warning).toContain('http://127.0.0.1:3000');
    expect(defaultBaseUrlWarning(loadConfig({ HOST: '::' }))).not.toBeNull();
    expect(defaultBaseUrlWarning(loadConfig({ HOST: '10.1.2.3' }))).not.toBeNull();
    expect(defaultBaseUrlWarning(loadConfig({ HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://c.example.org' }))).toBeNull();
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(defaultBaseUrlWarning(loadConfig({ HOST: host })), host).toBeNull();
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'conclave.example.org', '::ffff:10.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('prints the warning when the process starts', async () => {
    // A documentation address: the process warns at start, then cannot bind it (nothing is exposed).
    const dataDir = path.join(tmpdir(), `conclave-warned-${process.pid}`);
    const child = spawn(process.execPath, [BUILT_SERVICE], {
      cwd: new URL('../../../', import.meta.url),
      env: { ...process.env, HOST: '192.0.2.1', PORT: '0', LOG_LEVEL: 'warn', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    await rm(dataDir, { recursive: true, force: true });
    expect(code).toBe(1);
    const warning = output.split('\n').find((line) => line.includes('PUBLIC_BASE_URL IS NOT SET'));
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, variable: 'PUBLIC_BASE_URL' });
    expect(output).toContain('HOST: "192.0.2.1" is not an address of this machine');
  }, 30_000);
});

describe('TRUST_PROXY', () => {
  it('warns loudly, with the reason, when it trusts every hop; a list of proxies is quiet', () => {
    const warning = trustProxyWarning(loadConfig({ TRUST_PROXY: 'true' }));
    expect(warning).toContain('TRUST_PROXY=true TRUSTS EVERY HOP');
    expect(warning).toContain('left-most X-Forwarded-For entry');
    expect(warning).toContain('docs/operators.md, Behind a proxy');
    expect(trustProxyWarning(loadConfig({ TRUST_PROXY: '172.31.240.10' }))).toBeNull();
    expect(trustProxyWarning(loadConfig({ TRUST_PROXY: '10.0.0.0/8,192.0.2.1' }))).toBeNull();
    expect(trustProxyWarning(loadConfig({}))).toBeNull();
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,192.0.2.1' }).trustProxy).toEqual(['10.0.0.0/8', '192.0.2.1']);
  });
});
