/**
 * MCP `choose` beside REST `choose` on one room, both MCP eras, interleaved in rounds on one service
 * (bench/mcp-vs-rest.ts); each MCP row's ratio is its req/s over the REST row's (target ≥ 0.8). The
 * floor rows are the same calls to a bare server of the same SDK with one no-op tool (bench/mcp-floor.ts),
 * so each MCP row's note splits its cost per call (1 / req/s) into REST's, the SDK's (the floor's
 * over plain fastify's on the same server, interleaved too) and ours (the rest). Above them, each catalog's tool count and size.
 */
import { mcpVsRest, type Result } from '../mcp-vs-rest.js';
import type { BenchCase, BenchRow } from '../table.js';

const microseconds = (rps: number) => 1e6 / rps;
const grouped = (n: number) => Math.round(n).toLocaleString('en-US');

export const mcp: BenchCase = {
  id: 'mcp',
  async run(context) {
    const { results, catalogs } = await mcpVsRest(context.seconds, context.connections);
    const byName = new Map(results.map((r) => [r.name, r]));
    const rest = byName.get('REST POST /choose')!;
    const bare = byName.get('floor: bare fastify POST')!;
    const row = (r: Result): BenchRow => ({
      case: `${r.name}, 1 room`,
      rps: r.rps,
      p50: r.p50,
      p99: r.p99,
      errors: r.errors,
    });
    const eraRow = (era: string): BenchRow => {
      const call = byName.get(`MCP ${era} choose`)!;
      const floor = byName.get(`floor: bare MCP SDK, no-op ${era} choose`)!;
      const sdk = microseconds(floor.rps) - microseconds(bare.rps);
      const ours = microseconds(call.rps) - microseconds(rest.rps) - sdk;
      return {
        ...row(call),
        ratio: call.rps / rest.rps,
        note: `ratio vs REST; µs a call ≈ REST ${grouped(microseconds(rest.rps))} + SDK ${grouped(sdk)} + ours ${grouped(ours)}`,
      };
    };
    const floorRow = (era: string): BenchRow => {
      const floor = byName.get(`floor: bare MCP SDK, no-op ${era} choose`)!;
      return {
        ...row(floor),
        case: floor.name,
        ratio: floor.rps / bare.rps,
        note: 'ratio vs the bare fastify POST row; same SDK, eras and fastify mounting, one no-op tool',
      };
    };
    return [
      ...catalogs.map((c) => ({
        case: `MCP catalog ${c.path}: ${c.tools} tools`,
        note: `tools/list ${grouped(c.characters)} characters (2026-07-28)`,
      })),
      { ...row(rest), note: 'baseline of the MCP rows below; rounds interleaved with them' },
      eraRow('2026-07-28'),
      eraRow('2025-11-25'),
      { ...row(bare), case: bare.name, note: 'the floor server without MCP; rounds interleaved with the rows above' },
      floorRow('2026-07-28'),
      floorRow('2025-11-25'),
    ];
  },
};
