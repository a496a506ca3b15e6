/**
 * The process entry listens before the app loads (src/start.ts) with the settings it reads itself:
 * they must be what src/config.ts would read from the same environment, or be left to it; and the
 * server it listens with must be the one fastify would have made from app.ts's options.
 */
import { createServer } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createServiceServer, KEEP_ALIVE_TIMEOUT_MS, NODE_SERVER_OPTIONS } from '../../../src/http/http-server.js';
import { earlySettings, listenFirst } from '../../../src/start.js';

const VALUES = [
  undefined,
  '',
  ' ',
  '0',
  '1',
  '3000',
  '65535',
  '65536',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  ' 80 ',
  'abc',
  '999',
  '1000',
  '60000',
  '60001',
];
const HOSTS = [undefined, '', '127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'example.invalid'];
const LEVELS = [undefined, '', 'info', 'warn', 'silent', 'trace', 'verbose', 'INFO'];

/** config.ts's reading, or null when it refuses the environment. */
function configOf(env: NodeJS.ProcessEnv) {
  try {
    return loadConfig({ DATA_DIR: '/tmp/conclave-early-settings', ...env });
  } catch {
    return null;
  }
}

describe('the entry reads what config.ts reads', () => {
  it('takes a value only when config.ts takes the same one, and leaves the rest to it', () => {
    const environments: NodeJS.ProcessEnv[] = [
      ...VALUES.map((PORT) => ({ PORT })),
      ...VALUES.map((HEADERS_TIMEOUT_MS) => ({ HEADERS_TIMEOUT_MS })),
      ...HOSTS.map((HOST) => ({ HOST })),
      ...LEVELS.map((LOG_LEVEL) => ({ LOG_LEVEL })),
    ].map((env) => Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)));
    let taken = 0;
    for (const env of environments) {
      const early = earlySettings(env);
      const config = configOf(env);
      if (early === null) continue;
      taken++;
      expect(config, JSON.stringify(env)).not.toBeNull();
      expect(
        { port: early.port, host: early.host, headersTimeoutMs: early.headersTimeoutMs, logLevel: early.logLevel },
        JSON.stringify(env),
      ).toEqual({
        port: config!.port,
        host: config!.host,
        headersTimeoutMs: config!.sockets.headersTimeoutMs,
        logLevel: config!.logLevel,
      });
    }
    expect(taken).toBeGreaterThan(20);
    // fastify binds each address of localhost itself: left to it.
    expect(earlySettings({ HOST: 'localhost' })).toBeNull();
  });

  it('leaves a port it cannot listen on to the app, which names the variable', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      expect(await listenFirst({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' })).toBeNull();
    } finally {
      taken.close();
    }
  });
});

describe('the early server', () => {
  it('is the server fastify makes from app.ts options', async () => {
    const app = Fastify({
      http: { ...NODE_SERVER_OPTIONS },
      requestTimeout: 0,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    });
    const early = createServiceServer();
    for (const setting of [
      'keepAliveTimeout',
      'requestTimeout',
      'headersTimeout',
      'timeout',
      'maxRequestsPerSocket',
      'requireHostHeader',
    ] as const) {
      // requireHostHeader is kept on the server though @types/node does not declare it.
      const read = (server: object) => (server as Record<string, unknown>)[setting];
      expect(read(early), setting).toBe(read(app.server));
    }
    await app.close();
  });
});
