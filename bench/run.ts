/**
 * `npm run bench`: every case in bench/cases/, on loopback, in one run, printed as one table beside
 * the bare-fastify baselines measured first in the same run.
 *   npm run bench                      (BENCH_SECONDS=5 per load phase by default)
 *   BENCH_ONLY=one-room npm run bench  (run only the named cases; the baselines always run)
 *   BENCH_CONNECTIONS=100 npm run bench (connections per load phase; 10 by default)
 */
import { ensureBuilt } from '../test/support/built.js';
import { cases } from './cases/index.js';
import { type BenchContext, type BenchRow, load, printTable } from './table.js';
import Fastify from 'fastify';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);

async function measureBaselines(): Promise<BenchContext['baselines']> {
  const app = Fastify({ logger: false });
  app.post('/choose', async (request) => ({ ok: true, echo: request.body }));
  app.get('/read', async () => ({ ok: true }));
  const url = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  const options = { seconds: SECONDS, connections: CONNECTIONS };
  try {
    const post = await load(
      'bare fastify POST (baseline)',
      {
        url: `${url}/choose`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ choice: 'alpha' }),
      },
      options,
    );
    const get = await load('bare fastify GET (baseline)', { url: `${url}/read` }, options);
    return { post, get };
  } finally {
    await app.close();
  }
}

// Services the cases start as child processes are the built ones, as `npm start` runs them.
await ensureBuilt();
const baselines = await measureBaselines();
const context: BenchContext = { seconds: SECONDS, connections: CONNECTIONS, baselines };
const rows: BenchRow[] = [baselines.post, baselines.get];
for (const benchCase of cases) {
  if (only && !only.includes(benchCase.id)) continue;
  rows.push(...(await benchCase.run(context)));
}
console.log(`\n${SECONDS}s per load phase, ${CONNECTIONS} connections, loopback, node ${process.version}`);
printTable(rows);
