/**
 * Runs once before every test file: the built service and command line that child-process tests
 * start are brought up to date with the sources (test/support/built.ts).
 */
import { ensureBuilt } from './support/built.js';

export default async function setup(): Promise<void> {
  await ensureBuilt();
}
