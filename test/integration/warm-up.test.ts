/** The start-up warm-up (src/warm-up.ts): runs its calls against a throwaway service and leaves nothing behind. */
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { warmUp } from '../../src/warm-up.js';

const warmupDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('conclave-warmup-'));

describe('start-up warm-up', () => {
  it('serves its calls on a throwaway service and deletes its directory', async () => {
    const before = new Set(await warmupDirs());
    const report = await warmUp(60);
    expect(report.turns).toBe(60);
    expect(report.ms).toBeGreaterThan(0);
    expect(report.failures).toBe(0);
    expect((await warmupDirs()).filter((name) => !before.has(name))).toEqual([]);
  }, 60_000);
});
