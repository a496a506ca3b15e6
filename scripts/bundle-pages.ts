/**
 * Build step: the pages' browser scripts into dist/public/ (see src/pages/bundle.ts), and the two
 * state charts as the visualizer page embeds them into dist/public/charts/ (src/visualizer/charts.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { bundlePages } from '../src/pages/bundle.js';
import { chartSvg } from '../src/visualizer/chart-svg.js';
import { machineCharts } from '../src/visualizer/charts.js';

const dir = new URL('../dist/public/', import.meta.url);
await mkdir(dir, { recursive: true });
for (const [name, code] of Object.entries(await bundlePages())) {
  await writeFile(new URL(`${name}.js`, dir), code);
}

const charts = new URL('charts/', dir);
await mkdir(charts, { recursive: true });
for (const [name, chart] of Object.entries(machineCharts())) {
  await writeFile(new URL(`${name}.svg`, charts), await chartSvg(chart, { embedded: true }));
}
