/**
 * docs/operators.md (Capacity) stays in step with the bench that produces its numbers: it lists
 * every row the capacity case prints (bench/capacity/inputs.ts, ROWS), and its bold results are the
 * arithmetic of bench/capacity/plan.ts run on the figures its own table gives.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type CapacityFigures, ROWS } from '../../bench/capacity/inputs.js';
import { ASSUMPTIONS, planRooms, planWrites } from '../../bench/capacity/plan.js';

const operators = readFileSync('docs/operators.md', 'utf8');
const section = operators.slice(operators.indexOf('\n## Capacity\n'), operators.indexOf('\n## Health and metrics\n'));

/** A measured cell (`111.9 KiB`, `742 µs`, `226 /s`, `12,364 ms`) in the plan's units: bytes, ms, per second. */
function measured(cell: string): number {
  const match = /^([0-9][0-9,]*(?:\.[0-9]+)?) (KiB|µs|ms|\/s)/.exec(cell.trim());
  if (!match) throw new Error(`not a measured figure: ${cell}`);
  const value = Number(match[1]!.replaceAll(',', ''));
  return value * { KiB: 1024, µs: 0.001, ms: 1, '/s': 1 }[match[2] as 'KiB' | 'µs' | 'ms' | '/s'];
}

/** The table's `Figure` column (the CapacityFigures key) to its `Measured` column. */
function figuresOfTable(): Partial<CapacityFigures> {
  const figures: Record<string, number> = {};
  for (const [, figure, cell] of section.matchAll(/^\|[^|]*\|[^|]*\| `(\w+)`[^|]*\| ([^|]+) \|/gm)) {
    figures[figure!] = measured(cell!);
  }
  return figures as Partial<CapacityFigures>;
}

describe('docs/operators.md, Capacity', () => {
  it('lists every row the capacity case prints', () => {
    expect(section.length).toBeGreaterThan(0);
    for (const row of Object.values(ROWS)) expect(section).toContain(row);
  });

  it('gives the arithmetic of bench/capacity/plan.ts on its own table', () => {
    const table = figuresOfTable();
    // Commits a second are given beside the notices ("171 /s for 171 commits/s").
    const commits = /(\d[\d,]*) commits\/s/.exec(section)?.[1];
    const figures = {
      ...table,
      commitsPerSecond: Number(commits?.replaceAll(',', '')),
      floorEvalsPerSecond: 0,
      floorRedisCpuMsPerEval: 0,
      floorMs: 0,
    } as CapacityFigures;
    for (const key of ['liveBytesPerRoom', 'concludedBytesPerRoom', 'redisCpuMsPerWrite', 'serviceCpuMsPerWrite']) {
      expect(figures[key as keyof CapacityFigures], key).toBeGreaterThan(0);
    }
    expect(section).toContain(`**${planRooms(figures, 1e6).mastersForMemory} masters** by memory`);
    expect(section).toContain(`**${planRooms(figures, 1e7).mastersForMemory} masters** by memory`);
    const writes = planWrites(figures, 10_000);
    expect(section).toContain(`**${writes.mastersForCpu} masters** by CPU`);
    expect(section).toContain(`**${writes.processesForWrites} processes**`);
    expect(section).toContain(`${ASSUMPTIONS.liveFraction * 100} % of rooms live`);
    expect(section).toContain(`${ASSUMPTIONS.masterDataBytes / 2 ** 30} GiB of data`);
  });
});
