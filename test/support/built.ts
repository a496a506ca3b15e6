/**
 * The built service and command line (`npm run build` into dist/), as `npm start` and the installed
 * `conclave` bin run them. Tests that start them as child processes run these files: a child started
 * through tsx spent twice the CPU of the built one before it listened (about 3.2 s against 1.6 s on
 * a 2-core machine), and the suite starts dozens of services and
 * about a hundred command lines. `ensureBuilt()` runs once before the suite
 * (test/global-setup.ts) and rebuilds only when a source is newer than the last build.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The service's entry point as `npm start` runs it. */
export const BUILT_SERVICE = path.join(repoRoot, 'dist/src/main.js');
/** The `conclave` bin as the package installs it. */
export const BUILT_CLI = path.join(repoRoot, 'dist/src/cli/main.js');

/** Written when a build succeeds: its time is the build's start. */
const STAMP = path.join(repoRoot, 'dist/.built-from-sources');
/** What the build reads: a newer file here means dist/ is stale. */
const SOURCES = ['src', 'machines', 'scripts/bundle-pages.ts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newestChange(entry: string): number {
  const info = statSync(entry, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  return newest;
}

function builtAt(): number {
  return statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

/** Builds dist/ unless it is newer than every source; true when it built. */
export async function ensureBuilt(): Promise<boolean> {
  const newest = Math.max(...SOURCES.map((entry) => newestChange(path.join(repoRoot, entry))));
  if (builtAt() > newest) return false;
  const started = new Date();
  await promisify(execFile)('npm', ['run', 'build'], { cwd: repoRoot, timeout: 300_000 });
  // The start, not the end: a source saved while the build ran makes the next run build again.
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
  return true;
}
