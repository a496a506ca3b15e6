/** Writes the state charts of machines/ into visualizations/ (Mermaid and SVG). Run: npm run visualize. */
import { writeFile } from 'node:fs/promises';
import { drawings } from './drawings.js';

for (const [file, text] of Object.entries(await drawings())) {
  await writeFile(new URL(`./${file}`, import.meta.url), text);
  console.log(`visualizations/${file}`);
}
