/**
 * MCP `choose` beside REST `choose` on one room, both MCP eras, interleaved in rounds on one service
 * (bench/mcp-vs-rest.ts); each MCP row's ratio is its req/s over the REST row's (target ≥ 0.8).
 */
import { mcpVsRest } from '../mcp-vs-rest.js';
import type { BenchCase, BenchRow } from '../table.js';

export const mcp: BenchCase = {
  id: 'mcp',
  async run(context) {
    const [rest, ...eras] = await mcpVsRest(context.seconds, context.connections);
    const row = (r: NonNullable<typeof rest>): BenchRow => ({
      case: `${r.name}, 1 room`,
      rps: r.rps,
      p50: r.p50,
      p99: r.p99,
      errors: r.errors,
    });
    return [
      { ...row(rest!), note: 'baseline of the MCP rows below; rounds interleaved with them' },
      ...eras.map((r) => ({
        ...row(r),
        ratio: r.rps / rest!.rps,
        note: 'ratio vs REST /choose, same service, interleaved',
      })),
    ];
  },
};
