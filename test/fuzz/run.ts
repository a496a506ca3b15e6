/**
 * `npm run fuzz`: the fuzzer at full length against a fresh service process (FUZZ_REQUESTS, default
 * 100,000; FUZZ_SEED; FUZZ_STORE=redis with REDIS_URL to fuzz the Redis store). Prints the figures
 * and exits non-zero on any 5xx, non-envelope answer, crash, credential in the log, or RSS after the
 * run above 1.3× RSS after warm-up. The service runs with a bounded old space (128 MiB), so a leak
 * shows as growth or an out-of-memory crash rather than hiding in a heap V8 sized to the load.
 */
import { ensureBuilt } from '../support/built.js';
import { runFuzz, summarize } from './fuzzer.js';

const requests = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const env: Record<string, string> =
  process.env.FUZZ_STORE === 'redis'
    ? { STORE: 'redis', REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }
    : {};
// The fuzzed service is the built one (test/support/built.ts).
await ensureBuilt();
const report = await runFuzz({
  requests,
  seed: Number(process.env.FUZZ_SEED ?? 1),
  concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 16),
  env,
  onProgress: (r) =>
    console.log(
      `… ${r.sent} requests, 5xx ${r.serverErrors.length}, non-envelope ${r.nonEnvelope.length}, RSS ${r.rss.at(-1)?.mib} MiB`,
    ),
});
console.log(summarize(report));
const rssRatio = report.rssAfterRun / Math.max(report.rssAfterWarmUp, 1);
const failed =
  report.serverErrors.length > 0 ||
  report.nonEnvelope.length > 0 ||
  report.crashed ||
  report.credentialsInLog.length > 0 ||
  rssRatio > 1.3;
process.exit(failed ? 1 : 0);
