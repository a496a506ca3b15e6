/** The committed drawings in visualizations/ are what `npm run visualize` makes of today's machines. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chartSvg } from '../../../src/visualizer/chart-svg.js';
import { chartDrawings, machineCharts, withoutOwnStyle } from '../../../src/visualizer/charts.js';
import { drawings } from '../../../visualizations/drawings.js';

describe('visualizations/', () => {
  it('holds the current drawings of both machines (run `npm run visualize` when this fails)', async () => {
    const files = await drawings();
    expect(Object.keys(files).sort()).toEqual(
      ['decision.md', 'decision.mmd', 'decision.svg', 'room.md', 'room.mmd', 'room.svg'].sort(),
    );
    for (const [file, text] of Object.entries(files)) {
      const committed = await readFile(new URL(`../../../visualizations/${file}`, import.meta.url), 'utf8');
      expect(committed, `visualizations/${file} is stale`).toBe(text);
    }
  });
});

describe('the drawings the visualizer page embeds', () => {
  it('are the committed ones without their own <style>, so no request has to lay a chart out', async () => {
    const charts = machineCharts();
    for (const name of ['room', 'decision'] as const) {
      const committed = await readFile(new URL(`../../../visualizations/${name}.svg`, import.meta.url), 'utf8');
      expect(withoutOwnStyle(committed)).toBe(await chartSvg(charts[name], { embedded: true }));
    }
    const served = await chartDrawings();
    expect(served.decision).toBe(await chartSvg(charts.decision, { embedded: true }));
  });
});
