import { describe, expect, it } from 'vitest';
import { capHeapGrowth, commandLineSetsHeapGrowth, HEAP_GROWING_PERCENT } from '../../../src/runtime/heap-growth.js';

describe('the heap growing factor (docs/architecture.md, Memory and disk against one client)', () => {
  it('is capped at twice the live heap unless the node command line chose one', () => {
    expect(HEAP_GROWING_PERCENT).toBe(100);
    expect(capHeapGrowth(['--import', 'tsx'])).toBe(HEAP_GROWING_PERCENT);
    expect(capHeapGrowth(['--heap-growing-percent=50'])).toBeNull();
  });

  it('recognises the flag as V8 spells it, with dashes or underscores, and nothing longer', () => {
    expect(commandLineSetsHeapGrowth(['--heap_growing_percent=30'])).toBe(true);
    expect(commandLineSetsHeapGrowth(['--heap-growing-percent'])).toBe(true);
    expect(commandLineSetsHeapGrowth(['--heap-growing-percentage=30', '--max-old-space-size=512'])).toBe(false);
    expect(commandLineSetsHeapGrowth([])).toBe(false);
  });
});
