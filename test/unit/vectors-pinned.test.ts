import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VECTOR_FILES, vectorBytes } from '../vectors/load.js';

interface Pins {
  sha256: Record<string, string>;
}

const pins = JSON.parse(vectorBytes('pinned.json').toString('utf8')) as Pins;

describe('test/vectors: the protocol vectors the suite carries', () => {
  it('pins every vector file, and only those', () => {
    const onDisk = readdirSync(new URL('../vectors/', import.meta.url)).filter(
      (name) => name.endsWith('.json') && name !== 'pinned.json',
    );
    expect(onDisk.sort()).toEqual([...VECTOR_FILES].sort());
    expect(Object.keys(pins.sha256).sort()).toEqual([...VECTOR_FILES].sort());
  });

  it.each(VECTOR_FILES)('%s matches its pinned SHA-256 (change both together, with the reason)', (name) => {
    const actual = createHash('sha256').update(vectorBytes(name)).digest('hex');
    expect(actual).toBe(pins.sha256[name]);
  });
});
