/**
 * The files `npm run visualize` writes into visualizations/: each state chart as Mermaid and as
 * SVG, drawn from the machine definitions by the same code the visualizer page uses.
 */
import { mermaidOf } from '../src/visualizer/chart-model.js';
import { chartSvg } from '../src/visualizer/chart-svg.js';
import { machineCharts } from '../src/visualizer/charts.js';

export async function drawings(): Promise<Record<string, string>> {
  const charts = machineCharts();
  const files: Record<string, string> = {};
  for (const name of ['room', 'decision'] as const) {
    const text = mermaidOf(charts[name]);
    files[`${name}.mmd`] = text;
    files[`${name}.md`] =
      `# ${name} machine\n\nGenerated from \`machines/${name}.machine.ts\` by \`npm run visualize\`.\n\n![${name} state chart](./${name}.svg)\n\n\`\`\`mermaid\n${text}\`\`\`\n`;
    // Standalone files carry their own <style>; the visualizer page's copies take the page's stylesheet.
    files[`${name}.svg`] = await chartSvg(charts[name]);
  }
  return files;
}
