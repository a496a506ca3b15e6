/**
 * The service as the benchmarks run it: in this process, on a free loopback port, a fresh data
 * directory, rate limits off (a bench measures the transports, not the limiter).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What a bench service turns off: rate limits and parking shares (a bench measures the transports, not the limiter). */
export const BENCH_ENV: Record<string, string> = {
  RATE_LIMIT_IP_PER_MIN: '0',
  RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
  RATE_LIMIT_CREATE_PER_HOUR: '0',
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
  RATE_LIMIT_ISSUER_PER_MIN: '0',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
  // One load client parks thousands of waits from one address with one token.
  PARKED_SHARE_PER_ADDRESS_PERCENT: '100',
  PARKED_SHARE_PER_CREDENTIAL_PERCENT: '100',
  // ...over thousands of sockets.
  MAX_CONNECTIONS_PER_ADDRESS: '0',
};

export async function startBenchService(env: Record<string, string> = {}) {
  // Imported lazily: a forked load client may import this file and needs none of the service.
  const { loadConfig } = await import('../src/config.js');
  const { createService } = await import('../src/service.js');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-bench-'));
  const service = await createService(
    loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      ...BENCH_ENV,
      ...env,
    }),
  );
  // The backlog the service process listens with (src/server-process.ts).
  const { LISTEN_BACKLOG } = await import('../src/http/app.js');
  const base = (await service.app.listen({ port: 0, host: '127.0.0.1', backlog: LISTEN_BACKLOG })).replace(
    'localhost',
    '127.0.0.1',
  );
  // The position keys, derived before the first seal as the service process does (src/server-process.ts).
  service.services.positions?.all();
  service.services.baseUrl = base;
  return { service, base, dataDir };
}

/** A room with one open decision on a two-week window; its creator's token acts in it. */
export async function createBenchRoom(
  base: string,
  config: Record<string, unknown> = {},
): Promise<{ slug: string; token: string }> {
  const response = await fetch(`${base}/api/rooms`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      question: 'Benchmark?',
      options: ['alpha', 'beta'],
      config: { voting_window: 1_209_600, ...config },
    }),
  });
  const body = (await response.json()) as { slug: string; creator_token: string };
  return { slug: body.slug, token: body.creator_token };
}

export type Api = (method: string, path: string, token?: string, body?: unknown) => Promise<Record<string, any>>;

/**
 * JSON calls to one process; a 503 (back-pressure on a loaded machine) is retried as a client would,
 * after a short pause. Any other refusal throws: the case's numbers count only what succeeded.
 */
export function apiFor(base: string): Api {
  return async (method, path, token, body) => {
    for (;;) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (response.status === 503) {
        await response.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      const json = (await response.json()) as Record<string, any>;
      if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    }
  };
}
