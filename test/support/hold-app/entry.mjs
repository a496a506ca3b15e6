// The built entry with the app's load held (spawnService({ holdAppUntil })): src/start.ts listens
// as it does for `npm start`, then waits for the file HOLD_APP_UNTIL names before it loads the app,
// so a test can watch the early server (src/http/early-server.ts) for as long as it likes. The wait
// is a timer on the main thread, which keeps answering meanwhile (a module-resolution hook would
// block it on Node 26, where the main thread waits for the hooks' thread).
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundledApp, loadApp, startServer } from '../../../dist/src/start.js';

const until = process.env.HOLD_APP_UNTIL;

startServer(process.env, async () => {
  while (until && !existsSync(until)) await sleep(10);
  // Which module the entry loads (the bundle or the modules one by one), for the test to read.
  process.stderr.write(`hold-app: ${bundledApp()?.href ?? 'modules'}\n`);
  return loadApp();
}).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
