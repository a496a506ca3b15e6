/**
 * The hot-room load as its own process
 * (`tsx bench/hot-room-client.ts <base> <agents> <rounds> [spreadMs] [warmups]`):
 * a thousand separate clients must not share the server's event loop, or they pace its batches.
 * The first room warms the service up (a running service has compiled its hot paths) and is not
 * reported, unless `warmups` is 0: the cold row measures the first burst after start-up; each
 * further round is a new room.
 * With `spreadMs`, the agents' choices start evenly spread over that many milliseconds instead of
 * all at once. Prints one JSON line per measured round.
 */
import { percentile, runHotRoom } from '../test/support/hot-room.js';

const [base, agents, rounds, spread, warmups] = process.argv.slice(2);
const spreadMs = Number(spread ?? 0);
for (let i = 0; i < Number(warmups ?? 1); i++) await runHotRoom(base!, Number(agents ?? 1000));
for (let round = 0; round < Number(rounds ?? 3); round++) {
  const run = await runHotRoom(base!, Number(agents ?? 1000), spreadMs);
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
}
