/**
 * Build step: the app (dist/src/server-process.js and everything it imports, dependencies
 * included) as one module, dist/src/bundle/server-process.js, which the process entry imports
 * once it listens (src/start.ts). Node 20's loader resolves, reads and links the app's 969 modules
 * (283 of them the service's) one by one; as one file, the app served 0.5-0.9 s sooner on two cores
 * (1.6-2.5 s from listening to serving down to 1.1-1.2 s).
 *
 * better-sqlite3 stays outside (a native addon, loaded from node_modules). The bundle sits two
 * directories below dist/, as the modules it replaces did, so what they find beside themselves
 * (dist/public/, docs/, package.json, node_modules through createRequire) is found the same way.
 *
 * Its source map, server-process.js.map beside it, leads through tsc's maps back to src/*.ts.
 * 'linked' (a sourceMappingURL comment) rather than 'inline' or 'external': Node reads the map only
 * when source maps are on (NODE_OPTIONS=--enable-source-maps, docs/operators.md, Start), so a start
 * without them loads no more than before; 'external' writes the map without the comment, and Node
 * would never find it.
 */
import { build } from 'esbuild';

const entry = new URL('../dist/src/server-process.js', import.meta.url);
const outfile = new URL('../dist/src/bundle/server-process.js', import.meta.url);

await build({
  entryPoints: [entry.pathname],
  outfile: outfile.pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // The oldest line package.json's engines accept.
  target: 'node20.19',
  external: ['better-sqlite3'],
  sourcemap: 'linked',
  // Stack traces need only the files' names and lines: without the sources' text the map is under half the size.
  sourcesContent: false,
  // CommonJS dependencies call require() for node's modules; an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module';\nconst require = createRequireOfBundle(import.meta.url);" },
  logLevel: 'warning',
});
