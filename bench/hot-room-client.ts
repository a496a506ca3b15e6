/**
 * The hot-room load as its own process (`tsx bench/hot-room-client.ts <base> <agents>`): a
 * thousand separate clients must not share the server's event loop, or they pace its batches.
 * Prints one JSON line with the figures.
 */
import { percentile, runHotRoom } from '../test/support/hot-room.js';

const [base, agents] = process.argv.slice(2);
const run = await runHotRoom(base!, Number(agents ?? 1000));
console.log(
  JSON.stringify({
    acknowledged: run.acknowledged,
    p50: percentile(run.latenciesMs, 50),
    p99: percentile(run.latenciesMs, 99),
    max: run.latenciesMs.at(-1),
    receipts: run.receipts,
    chainOk: run.chainOk,
  }),
);
