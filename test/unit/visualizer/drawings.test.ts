/** The committed drawings in visualizations/ are what `npm run visualize` makes of today's machines. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
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
