/**
 * The built service and command line (`npm run build` into dist/), as `npm start` and the installed
 * `conclave` bin run them. Tests that start them as child processes run these files: a child started
 * through tsx spent twice the CPU of the built one before it listened (about 3.2 s against 1.6 s on
 * a 2-core machine), and the suite starts dozens of services and
 * about a hundred command lines. `ensureBuilt()` runs once before the suite
 * (test/global-setup.ts) and rebuilds only when a source is newer than the last build
 * (scripts/build-if-stale.mjs, which `npm start` runs too).
 */
import path from 'node:path';
import { ensureBuilt, repoRoot } from '../../scripts/build-if-stale.mjs';

export { ensureBuilt, repoRoot };

/** The service's entry point as `npm start` runs it. */
export const BUILT_SERVICE = path.join(repoRoot, 'dist/src/main.js');
/** The `conclave` bin as the package installs it. */
export const BUILT_CLI = path.join(repoRoot, 'dist/src/cli/main.js');
