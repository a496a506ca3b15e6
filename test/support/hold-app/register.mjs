// Preloaded with `node --import` by spawnService({ holdAppUntil }): holds the entry's import of the
// app (dist/src/server-process.js) until a file exists, so a test can watch the early server
// (src/http/early-server.ts) for as long as it likes. Module hooks run off the main thread: the
// early server keeps answering while the import waits.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url, { data: { until: process.env.HOLD_APP_UNTIL } });
