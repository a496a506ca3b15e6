/**
 * Warm from the first request (docs/performance.md, Warm from the first request). A fresh process
 * meets its first burst with nothing compiled: every function of the write path is parsed, run in
 * the interpreter and optimized while the first thousand choices queue behind it. Once the service
 * listens (liveness answers at once) and before it says it is ready (/readyz), this runs a throwaway service of the same code (embedded store in a temporary directory,
 * nothing shared with the real one: no room, key, receipt or log entry of it survives) through the
 * calls agents make most, then closes it and deletes its directory. Half the calls are a hot room's
 * burst — create, join, choose over REST and over MCP in both eras, discuss, reads and a long-poll
 * that answers at once; the other half are agents' visits over MCP, as the SDKs' clients make them
 * (warm-up-visits.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from './config.js';
import { WarmUpClient } from './warm-up-client.js';
import { agentVisits, EXCHANGES_PER_VISIT } from './warm-up-visits.js';

/** Seats in the warm-up room: choices rotate through them, as many members' would. */
const SEATS = 40;

export interface WarmUpReport {
  turns: number;
  ms: number;
  /** Calls not made because the time allowed ran out (WARMUP_MAX_MS). */
  skipped: number;
  /** Calls not answered with a 2xx (or an MCP error result): the warm-up then did not walk the path it meant to. */
  failures: number;
}

/** `maxMs`: stop sending calls after this long; the process is ready when the warm-up ends. */
export async function warmUp(turns: number, maxMs = Number.POSITIVE_INFINITY): Promise<WarmUpReport> {
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
      RATE_LIMIT_ISSUER_PER_MIN: '0',
      RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
      RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
      WARMUP_TURNS: '0',
    }),
  );
  const client = new WarmUpClient(service.app, started + maxMs);
  // Half the calls each way, rounded to whole visits; at least one visit once there are calls to make.
  const visits = turns > 0 ? Math.max(1, Math.round(turns / 2 / EXCHANGES_PER_VISIT)) : 0;
  try {
    await agentVisits(client, visits);
    await hotRoomBurst(client, Math.max(0, turns - visits * EXCHANGES_PER_VISIT));
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { turns, ms: Math.round(performance.now() - started), failures: client.failures, skipped: client.skipped };
}

/**
 * `calls` calls on one room of SEATS seats, concurrently in groups as a hot room's burst arrives (the
 * room's turn queue batches them as it would): mostly REST choices, with MCP choices in both eras,
 * messages, room reads and long-polls that answer at once.
 */
async function hotRoomBurst(client: WarmUpClient, calls: number): Promise<void> {
  const room = await client.rest('POST', '/api/rooms', undefined, {
    question: 'Warm-up?',
    options: ['alpha', 'beta'],
    config: { voting_window: 1_209_600, early_close: false },
  });
  const slug = room.slug as string;
  const tokens: string[] = [room.creator_token as string];
  for (let i = 1; i < SEATS; i++) {
    tokens.push(
      (await client.rest('POST', `/api/rooms/${slug}/join`, undefined, { display_name: `w${i}` }))
        .participant_token as string,
    );
  }
  const GROUP = 20;
  for (let i = 0; i < calls; i += GROUP) {
    await Promise.all(
      Array.from({ length: Math.min(GROUP, calls - i) }, (_, j) => {
        const n = i + j;
        const token = tokens[n % SEATS]!;
        const choice = n % 2 === 0 ? 'alpha' : 'beta';
        if (n % 10 === 7)
          return client.tool(n % 20 === 7 ? '2026-07-28' : '2025-11-25', n, 'choose', { slug, token, choice });
        if (n % 25 === 3) return client.rest('POST', `/api/rooms/${slug}/discuss`, token, { body: `warm-up ${n}` });
        if (n % 25 === 11) return client.rest('GET', `/api/rooms/${slug}`, token);
        if (n % 25 === 19) return client.rest('GET', `/api/rooms/${slug}/next-action?wait=0`, token);
        return client.rest('POST', `/api/rooms/${slug}/choose`, token, { choice });
      }),
    );
  }
}
