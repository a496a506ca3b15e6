/**
 * How far V8 lets the heap grow past what the last full collection kept (docs/architecture.md,
 * Memory and disk against one client). V8 sets the next full collection at a multiple of the live
 * heap: up to 4 when the heap limit is 2 GiB or more, which is Node's default on any machine with
 * 8 GiB of memory or more. Big rooms pass through the room cache and are promoted to the old
 * generation before they are evicted, so with ~80 MiB live the garbage of evicted rooms could pile
 * up to ~330 MiB of heap before anything collected it (measured: 100 of the largest rooms grew RSS
 * by up to 410 MiB on Node 26, and by 136–270 MiB on Node 20, whose collections happen to fall
 * earlier in the same cycle). A factor of 2 keeps the attack's growth near half of that and costs
 * one full collection per live heap's worth of promoted garbage (~10–50 ms for this service's heap).
 *
 * The factor is V8's `--heap-growing-percent`, read by V8 at every full collection, so it can be set
 * at start whatever started the process (npm start, the image, `conclave serve`); a value given on
 * the node command line wins (V8 flags cannot go in NODE_OPTIONS).
 */
import { setFlagsFromString } from 'node:v8';

/** Each full collection lets the heap grow to twice what it kept. */
export const HEAP_GROWING_PERCENT = 100;

/** Whether the node command line chose the heap growing factor itself. */
export function commandLineSetsHeapGrowth(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/** Caps V8's heap growing factor for this process; returns the percent set, or null if the command line chose. */
export function capHeapGrowth(execArgv: readonly string[] = process.execArgv): number | null {
  if (commandLineSetsHeapGrowth(execArgv)) return null;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return HEAP_GROWING_PERCENT;
}
