/**
 * Builds dist/ (`npm run build`) unless it is newer than every source it is built from: `npm start`
 * runs this first (prestart), so a restart of an unchanged tree starts at once instead of compiling
 * for most of a minute, and the suite's child-process tests share it (test/support/built.ts).
 * Plain JavaScript, so checking needs no TypeScript loader.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** Written when a build succeeds: its time is the build's start. */
const STAMP = path.join(repoRoot, 'dist/.built-from-sources');
/** What the build reads: a newer file here means dist/ is stale. */
const SOURCES = [
  'src',
  'machines',
  'scripts/bundle-pages.ts',
  'scripts/bundle-server.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

/** @param {string} entry */
function newestChange(entry) {
  const info = statSync(entry, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  return newest;
}

function builtAt() {
  return statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

/** @returns {boolean} whether dist/ is older than a source */
export function isStale() {
  const newest = Math.max(...SOURCES.map((entry) => newestChange(path.join(repoRoot, entry))));
  return builtAt() <= newest;
}

/**
 * Builds dist/ unless it is newer than every source.
 * @param {{ stdio?: 'inherit' | 'pipe' }} [options]
 * @returns {Promise<boolean>} true when it built
 */
export async function ensureBuilt(options = {}) {
  if (!isStale()) return false;
  const started = new Date();
  if (options.stdio === 'inherit') {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync('npm', ['run', 'build'], { cwd: repoRoot, stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`npm run build exited with ${result.status}`);
  } else {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: repoRoot, timeout: 300_000 });
  }
  // The start, not the end: a source saved while the build ran makes the next run build again.
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = await ensureBuilt({ stdio: 'inherit' }).catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
  if (!built) console.log('dist/ is up to date with the sources: not rebuilding (npm run build forces it).');
}
