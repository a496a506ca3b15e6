/**
 * A starting process listens before its app has loaded (src/start.ts, docs/operators.md, Start):
 * liveness answers at once, /readyz says not_ready, every other request is refused 503 with
 * Retry-After in the envelope (a page for a browser), and once the app has loaded it serves the same
 * socket: nothing dropped or answered twice at the handover, the socket guards applying to the
 * connections made before it, a stop while loading, and a configuration problem found after
 * listening still ending the process with its message and a non-zero exit.
 *
 * The built entry is started with its import of the app held (test/support/hold-app/) until the
 * test writes a file, so the early window lasts as long as each test needs, on any machine.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChildService, isServing, spawnService } from '../support/child-service.js';
import { repoRoot } from '../support/built.js';
import { eventually } from '../support/engagement.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request through `agent` (kept alive when it is), its answer read whole. */
function call(
  base: string,
  method: string,
  urlPath: string,
  options: { agent?: Agent; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${urlPath}`,
      {
        method,
        ...(options.agent ? { agent: options.agent } : {}),
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        headers: options.headers ?? {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function release(service: ChildService): Promise<void> {
  return writeFile(path.join(service.dataDir, 'release'), '');
}

async function spawnHeld(env: Record<string, string> = {}): Promise<ChildService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-early-'));
  return spawnService(
    { LOG_LEVEL: 'info', ...env },
    { capture: true, dataDir, holdAppUntil: path.join(dataDir, 'release') },
  );
}

function exited(service: ChildService): Promise<number | null> {
  if (service.child.exitCode !== null) return Promise.resolve(service.child.exitCode);
  return new Promise((resolve) => service.child.once('exit', (code) => resolve(code)));
}

describe('start-up: listening before the app has loaded', () => {
  let service: ChildService | undefined;
  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('answers liveness, not_ready and 503 with Retry-After while loading, then serves the same socket', async () => {
    service = await spawnHeld();
    const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const health = await call(service.base, 'GET', '/healthz', { agent: keptAlive });
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toEqual({
        // Nothing checked yet: no store ping answered, no signing key loaded.
        status: 'degraded',
        version: '0.1.0',
        checks: { store: 'fail', signing_key: 'fail' },
      });
      expect(health.headers['cache-control']).toBe('no-store');

      const ready = await call(service.base, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toEqual({ status: 'not_ready' });

      for (const [method, urlPath, body] of [
        ['GET', '/api/rooms/some-room', undefined],
        ['POST', '/api/rooms', '{"title":"x"}'],
        ['POST', '/mcp', '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
      ] as const) {
        const refused = await call(service.base, method, urlPath, {
          headers: { 'content-type': 'application/json', 'x-correlation-id': 'early-1' },
          ...(body ? { body } : {}),
        });
        expect(refused.status, `${method} ${urlPath}`).toBe(503);
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(refused.headers['x-correlation-id']).toBe('early-1');
        const envelope = JSON.parse(refused.body) as { error: { code: string; message: string; request_id: string } };
        expect(envelope.error.code).toBe('vendor:conclave:unavailable');
        expect(envelope.error.message).toMatch(/starting/);
        expect(envelope.error.request_id).toBe('early-1');
      }

      // A browser navigating to a page reads a page; the API's paths stay JSON whatever Accept says.
      const page = await call(service.base, 'GET', '/r/some-room', { headers: { accept: 'text/html' } });
      expect(page.status).toBe(503);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['retry-after']).toBe('1');
      expect(page.body).toContain('vendor:conclave:unavailable');
      const apiAsBrowser = await call(service.base, 'GET', '/v1/openapi.json', { headers: { accept: 'text/html' } });
      expect(apiAsBrowser.headers['content-type']).toBe('application/json; charset=utf-8');

      await eventually(() => service!.output().includes('conclave listening'), 10_000);
      expect(service.output()).not.toContain('conclave serving');

      await release(service);
      await eventually(() => isServing(service!.base), 60_000);
      // WARMUP_TURNS=0 (spawnService): ready as soon as it serves.
      await eventually(async () => (await call(service!.base, 'GET', '/readyz')).status === 200, 10_000);
      // The connection made before the handover is served by the app now.
      const after = await call(service.base, 'GET', '/.well-known/jwks.json', { agent: keptAlive });
      expect(after.status).toBe(200);
      expect(JSON.parse(after.body)).toHaveProperty('keys');

      // The log line reaches the captured output through a pipe, possibly after /readyz said 200.
      await eventually(() => service!.output().includes('conclave ready'), 10_000);
      const log = service.output();
      expect(log.indexOf('conclave listening')).toBeLessThan(log.indexOf('conclave serving'));
      expect(log.indexOf('conclave serving')).toBeLessThan(log.indexOf('conclave ready'));
    } finally {
      keptAlive.destroy();
    }
  }, 120_000);

  it('answers with the CORS and security headers the app gives the same request, a preflight as the app does', async () => {
    service = await spawnHeld();
    const origin = { origin: 'https://client.example' };
    const requests: [string, string, Record<string, string>][] = [
      ['GET', '/healthz', origin],
      ['GET', '/readyz', origin],
      ['GET', '/api/rooms/some-room', origin],
      ['POST', '/api/rooms', { ...origin, 'content-type': 'application/json' }],
      [
        'OPTIONS',
        '/api/rooms',
        { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      ],
      // Same-origin only (cors-policy.ts): no CORS headers from either; a page's security headers.
      ['GET', '/r/some-room', { ...origin, accept: 'text/html' }],
    ];
    /** The CORS and security headers of each answer, and whether the preflight was answered 204. */
    const headersOf = async () => {
      const seen: Record<string, unknown>[] = [];
      for (const [method, urlPath, headers] of requests) {
        const answer = await call(service!.base, method, urlPath, {
          headers,
          // Refused by the app too (malformed JSON): an error answer, as the early one is.
          ...(method === 'POST' ? { body: '{' } : {}),
        });
        const kept = Object.entries(answer.headers)
          .filter(([name]) =>
            /^(access-control-|x-content-type-options$|referrer-policy$|content-security-policy$|x-frame-options$|vary$)/.test(
              name,
            ),
          )
          .sort(([a], [b]) => a.localeCompare(b));
        seen.push({
          request: `${method} ${urlPath}`,
          ...(method === 'OPTIONS' ? { status: answer.status } : {}),
          ...Object.fromEntries(kept),
        });
      }
      return seen;
    };
    const early = await headersOf();
    expect(early[2]).toMatchObject({ 'access-control-allow-origin': '*', 'x-content-type-options': 'nosniff' });
    expect(early[4]).toMatchObject({ status: 204 });

    await release(service);
    await eventually(async () => (await call(service!.base, 'GET', '/readyz')).status === 200, 60_000);
    expect(early).toEqual(await headersOf());
  }, 120_000);

  it('answers every request exactly once across the handover', async () => {
    service = await spawnHeld();
    const base = service.base;
    const keptAlive = new Agent({ keepAlive: true, maxSockets: 4 });
    const statuses: number[] = [];
    const failures: unknown[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        await call(base, 'GET', '/.well-known/jwks.json', { agent: keptAlive }).then(
          (answer) => statuses.push(answer.status),
          (error: unknown) => failures.push(error),
        );
      }
    };
    try {
      const clients = Array.from({ length: 4 }, client);
      await eventually(() => statuses.length >= 20, 30_000);
      await release(service);
      await eventually(() => statuses.filter((status) => status === 200).length >= 20, 60_000);
      stop = true;
      await Promise.all(clients);
    } finally {
      stop = true;
      keptAlive.destroy();
    }
    expect(failures).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([503, 200]));
    // Early refusals first, then the app's answers: one switch, never back.
    const firstServed = statuses.indexOf(200);
    expect(statuses.slice(firstServed).every((status) => status === 200)).toBe(true);
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/ERR_HTTP_HEADERS_SENT|ERR_STREAM_WRITE_AFTER_END/);
  }, 120_000);

  it('times out a silent connection made while loading, and counts it against the per-address cap after', async () => {
    service = await spawnHeld({ HEADERS_TIMEOUT_MS: '1000', MAX_CONNECTIONS_PER_ADDRESS: '2' });
    const port = Number(new URL(service.base).port);
    const open = (from: string) =>
      new Promise<{ socket: Socket; closed: Promise<string> }>((resolve) => {
        const socket = connect({ port, host: '127.0.0.1', localAddress: from });
        let received = '';
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString();
        });
        socket.on('error', () => {});
        const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
        socket.once('connect', () => resolve({ socket, closed }));
      });
    // Silent: the slow-request guard, installed before the first connection, answers 408 and closes it.
    const silent = await open('127.0.3.1');
    expect(await silent.closed).toMatch(/^HTTP\/1\.1 408/);

    // Two idle kept-alive sockets from one address, made while loading, fill its cap of 2 once the
    // app's connection guard has adopted them: a third from there is closed at once.
    const keptAlive = new Agent({ keepAlive: true, maxSockets: 2, localAddress: '127.0.3.2' });
    try {
      const early = await Promise.all([
        call(service.base, 'GET', '/healthz', { agent: keptAlive }),
        call(service.base, 'GET', '/healthz', { agent: keptAlive }),
      ]);
      expect(early.map((answer) => answer.status)).toEqual([200, 200]);
      await release(service);
      await eventually(() => isServing(service!.base), 60_000);
      const third = await open('127.0.3.2');
      expect(await third.closed).toBe('');
      // The two adopted sockets still serve (they only count as idle, and nothing needed their room).
      const again = await call(service.base, 'GET', '/.well-known/jwks.json', { agent: keptAlive });
      expect(again.status).toBe(200);

      // A client trickling its head one byte a second is cut off by the same guard, and each cut is
      // one `request refused` line naming the deadline and the address: by the entry's log while
      // loading (the silent socket above), by the app's logger after.
      const trickling = await open('127.0.3.3');
      const dribble = setInterval(() => trickling.socket.write('G'), 1000);
      try {
        expect(await trickling.closed).toMatch(/^HTTP\/1\.1 408/);
      } finally {
        clearInterval(dribble);
      }
      const cut = (address: string) =>
        service!
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((record) => record.msg === 'request refused' && record.remote_address === address);
      for (const address of ['127.0.3.1', '127.0.3.3']) {
        await eventually(() => cut(address) !== undefined, 10_000);
        expect(cut(address), address).toMatchObject({
          level: 30,
          status: 408,
          error_code: 'input.invalid',
          limit: 'headers',
          timeout_ms: 1000,
        });
      }
    } finally {
      keptAlive.destroy();
    }
  }, 120_000);

  it("loads the app from the build's one-file bundle (scripts/bundle-server.ts)", async () => {
    // Every spawned service of the suite runs it, so they all test the bundle, not the modules.
    expect(existsSync(path.join(repoRoot, 'dist/src/bundle/server-process.js'))).toBe(true);
    // Its source map lies beside it, named at its end (read only under --enable-source-maps), and
    // leads back to the service's TypeScript sources.
    const bundle = await readFile(path.join(repoRoot, 'dist/src/bundle/server-process.js'), 'utf8');
    expect(bundle.trimEnd().endsWith('//# sourceMappingURL=server-process.js.map')).toBe(true);
    const map = JSON.parse(await readFile(path.join(repoRoot, 'dist/src/bundle/server-process.js.map'), 'utf8')) as {
      sources: string[];
    };
    expect(map.sources).toEqual(expect.arrayContaining(['../../../src/server-process.ts', '../../../src/http/app.ts']));
    service = await spawnHeld();
    const loads = new Promise<string>((resolve) => {
      service!.child.stderr?.on('data', (chunk: Buffer) => {
        const line = chunk.toString().match(/hold-app: (\S+)/);
        if (line) resolve(line[1]!);
      });
    });
    await release(service);
    expect(await loads).toMatch(/\/dist\/src\/bundle\/server-process\.js$/);
    await eventually(() => isServing(service!.base), 60_000);
  }, 60_000);

  it('stops at once on SIGTERM while loading', async () => {
    service = await spawnHeld();
    const code = exited(service);
    service.child.kill('SIGTERM');
    expect(await code).toBe(0);
  }, 60_000);

  it('exits non-zero with the message when a variable it did not read at first is wrong', async () => {
    service = await spawnHeld({ STORE: 'cassandra' });
    expect((await call(service.base, 'GET', '/healthz')).status).toBe(200);
    const code = exited(service);
    await release(service);
    expect(await code).toBe(1);
    // 'exit' can come before the last of the process's output has been read from its pipe.
    await eventually(() => /STORE: .*must be one of sqlite, redis/.test(service!.output()), 10_000);
  }, 60_000);
});
