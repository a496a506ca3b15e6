/**
 * Warm from the first request (docs/performance.md, Warm from the first request). A fresh process
 * meets its first burst with nothing compiled: every function of the write path is parsed, run in
 * the interpreter and optimized while the first thousand choices queue behind it. Before the service
 * listens, this runs a throwaway service of the same code (embedded store in a temporary directory,
 * nothing shared with the real one: no room, key, receipt or log entry of it survives) through the
 * calls agents make most — create, join, choose over REST and over MCP in both eras, discuss, reads
 * and a long-poll that answers at once — then closes it and deletes its directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from './config.js';

/** Seats in the warm-up room: choices rotate through them, as many members' would. */
const SEATS = 40;

export interface WarmUpReport {
  turns: number;
  ms: number;
  /** Calls not answered with a 2xx (or an MCP error result): the warm-up then did not walk the path it meant to. */
  failures: number;
}

export async function warmUp(turns: number): Promise<WarmUpReport> {
  const started = performance.now();
  // Imported here: service.ts is the caller's module graph already; this keeps warm-up out of it.
  const { createService } = await import('./service.js');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-warmup-'));
  const service = await createService(
    loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
      WARMUP_TURNS: '0',
    }),
  );
  let failures = 0;
  const counted = (status: number, body: string) => {
    if (status >= 300 || body.includes('"isError":true')) failures++;
  };
  try {
    const call = async (method: 'GET' | 'POST', url: string, token?: string, body?: unknown) => {
      const response = await service.app.inject({
        method,
        url,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      counted(response.statusCode, response.body);
      return response.json() as { slug?: string; creator_token?: string; participant_token?: string };
    };
    const room = await call('POST', '/api/rooms', undefined, {
      question: 'Warm-up?',
      options: ['alpha', 'beta'],
      config: { voting_window: 1_209_600, early_close: false },
    });
    const slug = room.slug as string;
    const tokens: string[] = [room.creator_token as string];
    for (let i = 1; i < SEATS; i++) {
      tokens.push(
        (await call('POST', `/api/rooms/${slug}/join`, undefined, { display_name: `w${i}` }))
          .participant_token as string,
      );
    }
    const mcp = async (i: number, modern: boolean) => {
      const response = await service.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(modern ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'choose' } : {}),
        },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: {
            name: 'choose',
            arguments: { slug, token: tokens[i % SEATS], choice: i % 2 === 0 ? 'alpha' : 'beta' },
            ...(modern
              ? {
                  _meta: {
                    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                    'io.modelcontextprotocol/clientCapabilities': {},
                  },
                }
              : {}),
          },
        }),
      });
      counted(response.statusCode, response.body);
    };
    // Concurrent, in groups, as a burst arrives: the room's turn queue batches them as it would.
    const GROUP = 20;
    for (let i = 0; i < turns; i += GROUP) {
      await Promise.all(
        Array.from({ length: Math.min(GROUP, turns - i) }, (_, j) => {
          const n = i + j;
          const token = tokens[n % SEATS]!;
          if (n % 10 === 7) return mcp(n, n % 20 === 7);
          if (n % 25 === 3) return call('POST', `/api/rooms/${slug}/discuss`, token, { body: `warm-up ${n}` });
          if (n % 25 === 11) return call('GET', `/api/rooms/${slug}`, token);
          if (n % 25 === 19) return call('GET', `/api/rooms/${slug}/next-action?wait=0`, token);
          return call('POST', `/api/rooms/${slug}/choose`, token, { choice: n % 2 === 0 ? 'alpha' : 'beta' });
        }),
      );
    }
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { turns, ms: Math.round(performance.now() - started), failures };
}
