/**
 * The protocol's test vectors, carried in this folder so that a clone of the repository alone runs
 * every test (test/vectors/README.md). Tests read them at run time and never copy values by hand.
 */
import { readFileSync } from 'node:fs';

/** The vector files this folder carries, each pinned by its SHA-256 in `pinned.json`. */
export const VECTOR_FILES = ['mechanisms.json', 'lock-checks.json', 'tie-break.json', 'receipts.json'] as const;
export type VectorFile = (typeof VECTOR_FILES)[number];

/** A vector file's exact bytes. */
export function vectorBytes(name: VectorFile | 'pinned.json'): Buffer {
  return readFileSync(new URL(`./${name}`, import.meta.url));
}

/** A vector file, parsed. */
export function loadVector<T>(name: VectorFile): T {
  return JSON.parse(vectorBytes(name).toString('utf8')) as T;
}
