/** Starts a real Conclave service on a free loopback port with its own data directory. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/runtime/clock.js';
import { createService, type Service } from '../../src/service.js';
import { afterAll, beforeAll } from 'vitest';
import { checkResponse } from './openapi-responses.js';

/** Suites send many requests from 127.0.0.1; the rate-limit suites turn the limiters back on. */
export const NO_RATE_LIMITS = {
  RATE_LIMIT_IP_PER_MIN: '0',
  RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
  RATE_LIMIT_CREATE_PER_HOUR: '0',
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
  RATE_LIMIT_ISSUER_PER_MIN: '0',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
};

export interface RunningService {
  service: Service;
  base: string;
  dataDir: string;
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export async function startService(
  /** `port`: listen there (a service moved to another store answers at the URL it had), else a free one. */
  options: { clock?: Clock; env?: Record<string, string>; dataDir?: string; port?: number } = {},
): Promise<RunningService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'conclave-test-')));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ...NO_RATE_LIMITS,
    ...options.env,
  });
  const service = await createService(config, options.clock ? { clock: options.clock } : {});
  const address = await service.app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  // Links the service writes (room URLs, receipts) use the real port.
  const base = address.replace('localhost', '127.0.0.1');
  service.services.baseUrl = base;
  return {
    service,
    base,
    dataDir,
    async stop(stopOptions = {}) {
      await service.close();
      if (!stopOptions.keepData && !options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A small JSON client: returns status, headers and the parsed body; never throws on HTTP errors, but
 * throws when the body does not match the OpenAPI document (test/support/openapi-responses.ts).
 */
/** One service for a describe block: started before its tests, stopped after them. Read it inside tests. */
export function suiteService(options: Parameters<typeof startService>[0] = {}): () => RunningService {
  let running: RunningService | undefined;
  beforeAll(async () => {
    running = await startService(options);
  });
  afterAll(async () => {
    await running?.stop();
  });
  return () => running!;
}

export async function call(
  base: string,
  method: string,
  url: string,
  options: { token?: string | undefined; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${url}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  await checkResponse(base, method, url, response.status, response.headers.get('content-type'), parsed);
  return { status: response.status, body: parsed, headers: response.headers, text };
}
