/**
 * The one table `npm run bench` prints: every case's figures beside the bare-fastify baseline
 * measured in the same run (the machine is shared and noisy; only same-run ratios mean anything).
 */
import autocannon from 'autocannon';

export interface BenchRow {
  case: string;
  rps?: number;
  p50?: number;
  p99?: number;
  /** Ratio of `rps` to the named baseline row's `rps`, or any other same-run comparison. */
  ratio?: number;
  /** Free text: bytes, memory, counts, what the ratio compares against. */
  note?: string;
  errors?: number;
}

export interface Baselines {
  post: BenchRow;
  get: BenchRow;
}

export interface BenchContext {
  seconds: number;
  connections: number;
  baselines: Baselines;
}

export interface BenchCase {
  /** Short id, selectable with BENCH_ONLY=id1,id2. */
  id: string;
  run(context: BenchContext): Promise<BenchRow[]>;
}

export async function load(
  name: string,
  options: autocannon.Options,
  context: Pick<BenchContext, 'seconds' | 'connections'>,
): Promise<BenchRow> {
  const result = await autocannon({ connections: context.connections, duration: context.seconds, ...options });
  return {
    case: name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

export function ratioTo(row: BenchRow, baseline: BenchRow): BenchRow {
  return { ...row, ratio: row.rps && baseline.rps ? row.rps / baseline.rps : undefined };
}

export function printTable(rows: BenchRow[]): void {
  const cell = (value: number | undefined, digits = 0) => (value === undefined ? '' : value.toFixed(digits));
  const width = Math.max(28, ...rows.map((r) => r.case.length));
  console.log(
    'case'.padEnd(width),
    'req/s'.padStart(8),
    'p50 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'ratio'.padStart(7),
    'errors'.padStart(7),
    ' note',
  );
  for (const r of rows) {
    console.log(
      r.case.padEnd(width),
      cell(r.rps).padStart(8),
      cell(r.p50, r.p50 !== undefined && r.p50 < 10 ? 1 : 0).padStart(8),
      cell(r.p99, r.p99 !== undefined && r.p99 < 10 ? 1 : 0).padStart(8),
      cell(r.ratio, 3).padStart(7),
      (r.errors === undefined ? '' : String(r.errors)).padStart(7),
      r.note ? ` ${r.note}` : '',
    );
  }
}
