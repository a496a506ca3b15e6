/** Build step: the pages' browser scripts into dist/public/ (see src/pages/bundle.ts). */
import { mkdir, writeFile } from 'node:fs/promises';
import { bundlePages } from '../src/pages/bundle.js';

const dir = new URL('../dist/public/', import.meta.url);
await mkdir(dir, { recursive: true });
for (const [name, code] of Object.entries(await bundlePages())) {
  await writeFile(new URL(`${name}.js`, dir), code);
}
