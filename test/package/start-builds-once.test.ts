/**
 * `npm start` builds only a stale tree (scripts/build-if-stale.mjs, the prestart step): the suite's
 * global setup has just built dist/, so starting again must not compile (a rebuild took 40–60 s on a
 * 2-core machine, most of a restarted process's absence).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isStale, repoRoot } from '../../scripts/build-if-stale.mjs';

describe('npm start on a built tree', () => {
  it('the prestart step finds dist/ up to date and does not rebuild', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.prestart).toBe('node scripts/build-if-stale.mjs');
    expect(isStale()).toBe(false);
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: repoRoot });
    expect(stdout).toContain('not rebuilding');
    expect(isStale()).toBe(false);
  });
});
