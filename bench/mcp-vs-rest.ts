/**
 * MCP against REST in the same run, on loopback: `choose` revisions on an open decision (one room turn
 * with a durable SQLite commit each), driven over REST, over MCP 2026-07-28 (per-request envelope)
 * and over MCP 2025-11-25 (stateless, SSE-framed answers), and the same two MCP calls to a bare server
 * of the same SDK with one no-op tool (mcp-floor.ts). All five are interleaved in rounds (REST, MCP,
 * MCP, floor, floor, REST, ...) so that a shared machine's load swings hit them alike; each row sums
 * its rounds. Bounded: BENCH_SECONDS per case (default 2). Also a row group of `npm run bench`
 * (cases/mcp.ts), with the size of each catalog's tools/list.
 *   npx tsx bench/mcp-vs-rest.ts
 */
import { startBenchService } from './bench-service.js';
import { startMcpFloor } from './mcp-floor.js';
import { rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';

const WARMUP_SECONDS = 0.5;
const ROUNDS = 4;

export interface Request {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Result {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export type Check = (status: number, text: string) => boolean;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** `concurrency` workers, each issuing its own requests back to back for `seconds`. */
async function load(
  pool: Pool,
  concurrency: number,
  seconds: number,
  requestFor: (worker: number, i: number) => Request,
  check: Check,
) {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const request = requestFor(worker, i);
        const sent = performance.now();
        const response = await pool.request({ method: 'POST', ...request });
        const text = await response.body.text();
        latencies.push(performance.now() - sent);
        if (!check(response.statusCode, text)) {
          errors++;
          firstError ??= `${response.statusCode} ${text.slice(0, 300)}`;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  if (firstError) console.error(`first error: ${firstError}`);
  return { elapsed, latencies, errors };
}

export interface Case {
  name: string;
  requestFor: (worker: number, i: number) => Request;
  check: Check;
  /** Another server than the measured service (the SDK floor, mcp-floor.ts). */
  pool?: Pool;
}

/** Every case warmed up once, then ROUNDS rounds of each in turn; a case's figures sum its rounds. */
async function measureInterleaved(pool: Pool, concurrency: number, seconds: number, cases: Case[]): Promise<Result[]> {
  for (const c of cases) await load(c.pool ?? pool, concurrency, WARMUP_SECONDS, c.requestFor, c.check);
  const totals = cases.map(() => ({ elapsed: 0, latencies: [] as number[], errors: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, c] of cases.entries()) {
      const run = await load(c.pool ?? pool, concurrency, seconds / ROUNDS, c.requestFor, c.check);
      const total = totals[index]!;
      total.elapsed += run.elapsed;
      total.latencies.push(...run.latencies);
      total.errors += run.errors;
    }
  }
  return cases.map((c, index) => {
    const { elapsed, latencies, errors } = totals[index]!;
    latencies.sort((a, b) => a - b);
    return {
      name: c.name,
      requests: latencies.length,
      rps: Math.round(latencies.length / elapsed),
      p50: Number(percentile(latencies, 50).toFixed(2)),
      p99: Number(percentile(latencies, 99).toFixed(2)),
      errors,
    };
  });
}

/** The JSON-RPC answer of an MCP response, whether framed as JSON or as one SSE message. */
function rpcAnswer(text: string): any {
  const data = text.startsWith('event:')
    ? text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6)
    : text;
  return JSON.parse(data ?? 'null');
}

const mcpOk: Check = (status, text) => status === 200 && rpcAnswer(text)?.result?.isError !== true;
const restOk: Check = (status) => status === 200;

/** POSTs JSON and returns the parsed answer; a non-2xx answer throws with its body. */
export async function postJson(base: string, url: string, body: unknown): Promise<any> {
  const response = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A room with one open decision and `voters` joined participants: its slug and their tokens. */
export async function chooseRoom(base: string, voters: number): Promise<{ slug: string; tokens: string[] }> {
  const created = await postJson(base, '/api/rooms', {
    question: 'Benchmark?',
    options: ['alpha', 'beta'],
    config: { voting_window: 1_209_600, early_close: false },
  });
  const slug = created.slug as string;
  const tokens: string[] = [];
  for (let i = 0; i < voters; i++) {
    tokens.push((await postJson(base, `/api/rooms/${slug}/join`, { display_name: `voter-${i}` })).participant_token);
  }
  return { slug, tokens };
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A `tools/call` of `choose` in each era, as Request builders over the tool's arguments. */
function mcpChooseCases(
  label: string,
  argumentsFor: (worker: number, i: number) => Record<string, unknown>,
  pool?: Pool,
): Case[] {
  const toolCall = (worker: number, i: number, meta: Record<string, unknown> | undefined) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'choose', arguments: argumentsFor(worker, i), ...(meta ? { _meta: meta } : {}) },
    });
  return [
    {
      name: `${label} 2026-07-28 choose`,
      requestFor: (worker, i) => ({
        path: '/mcp',
        headers: {
          ...MCP_HEADERS,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'choose',
        },
        body: toolCall(worker, i, MODERN_META),
      }),
      check: mcpOk,
      ...(pool ? { pool } : {}),
    },
    {
      name: `${label} 2025-11-25 choose`,
      requestFor: (worker, i) => ({ path: '/mcp', headers: MCP_HEADERS, body: toolCall(worker, i, undefined) }),
      check: mcpOk,
      ...(pool ? { pool } : {}),
    },
  ];
}

/** The three `choose` cases on a room of chooseRoom: worker w acts with tokens[w]. */
export function chooseCases(slug: string, tokens: readonly string[]): Case[] {
  const choice = (i: number) => (i % 2 === 0 ? 'alpha' : 'beta');
  return [
    {
      name: 'REST POST /choose',
      requestFor: (worker, i) => ({
        path: `/api/rooms/${slug}/choose`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[worker]}` },
        body: JSON.stringify({ choice: choice(i) }),
      }),
      check: restOk,
    },
    ...mcpChooseCases('MCP', (worker, i) => ({ slug, token: tokens[worker], choice: choice(i) })),
  ];
}

/** The same two MCP calls sent to the bare SDK server of mcp-floor.ts (same arguments, no room behind them), and plain fastify there. */
function floorCases(pool: Pool, slug: string, tokens: readonly string[]): Case[] {
  const bare: Case = {
    name: 'floor: bare fastify POST',
    requestFor: () => ({
      path: '/choose',
      headers: { 'content-type': 'application/json' },
      body: '{"choice":"alpha"}',
    }),
    check: restOk,
    pool,
  };
  return [
    bare,
    ...mcpChooseCases(
      'floor: bare MCP SDK, no-op',
      (worker, i) => ({
        slug,
        token: tokens[worker],
        choice: i % 2 === 0 ? 'alpha' : 'beta',
      }),
      pool,
    ),
  ];
}

/** One catalog's `tools/list` as an agent receives it (2026-07-28): its tool count and its size in characters. */
export interface CatalogSize {
  path: string;
  tools: number;
  characters: number;
}

async function catalogSize(base: string, path: string): Promise<CatalogSize> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } }),
  });
  const result = rpcAnswer(await response.text())?.result;
  if (!Array.isArray(result?.tools)) throw new Error(`${path}: tools/list answered ${response.status}`);
  return { path, tools: result.tools.length, characters: JSON.stringify(result).length };
}

/**
 * REST, MCP 2026-07-28 and MCP 2025-11-25 `choose`, and the same two MCP calls on the bare SDK floor,
 * interleaved on one fresh service; and the size of each catalog that service lists.
 */
export async function mcpVsRest(
  seconds: number,
  concurrency: number,
): Promise<{ results: Result[]; catalogs: CatalogSize[] }> {
  const { service, base, dataDir } = await startBenchService();
  const floor = await startMcpFloor();
  const pool = new Pool(base, { connections: concurrency, pipelining: 1 });
  const floorPool = new Pool(floor.base, { connections: concurrency, pipelining: 1 });

  try {
    const catalogs = [await catalogSize(base, '/mcp'), await catalogSize(base, '/mcp/host')];
    const { slug, tokens } = await chooseRoom(base, concurrency);
    const cases = [...chooseCases(slug, tokens), ...floorCases(floorPool, slug, tokens)];
    return { results: await measureInterleaved(pool, concurrency, seconds, cases), catalogs };
  } finally {
    await pool.close();
    await floorPool.close();
    await floor.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 2);
  const concurrency = 10;
  const { results, catalogs } = await mcpVsRest(seconds, concurrency);
  const rest = results[0]!;
  console.log(`choose revisions, ${concurrency} connections, ${seconds}s per case in ${ROUNDS} rounds, loopback`);
  console.table(
    results.map((r) => ({
      case: r.name,
      requests: r.requests,
      'req/s': r.rps,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      errors: r.errors,
      'req/s vs REST': (r.rps / rest.rps).toFixed(2),
      'p50 vs REST': (r.p50 / rest.p50).toFixed(2),
    })),
  );
  for (const c of catalogs) console.log(`${c.path}: ${c.tools} tools, tools/list ${c.characters} characters`);
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
