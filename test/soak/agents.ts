/**
 * `npm run soak:agents` (not part of `npm test`): issue 27's 200-agent MCP scenario
 * (test/support/agents-scenario.ts) repeated for SOAK_SECONDS (600 by default) against three Redis
 * processes behind the shipped nginx template, while a random process is kill -9ed every
 * SOAK_KILL_EVERY_S (120 by default) and restarted on its port. Beside it, the topology suite's
 * book-keeping load (test/support/ledger.ts: REST writes retried with their Idempotency-Key until
 * acknowledged) runs a few rooms for the whole time.
 *
 * Checks, exit code 1 when one fails:
 * - no 500 anywhere: no `internal.error`, HTTP 500 or JSON-RPC internal error in any agent call, and no
 *   500 among the ledger's failed attempts;
 * - every acknowledged write present: the ledger's audit (each acknowledged message once, contiguous
 *   seqs, receipt chains verify) and, for every scenario room, each acknowledged seat and message.
 * Calls that were cut by a kill (nginx's 502, a reset connection) are counted and reported, not
 * failed: an agent meeting a dying process is what the soak provokes. Rooms whose agents lost a call
 * that way may stay unresolved; every room whose agents all finished must resolve and verify.
 *
 * Only the creation and per-address limits are lifted (RATE_LIMIT_CREATE_PER_HOUR,
 * RATE_LIMIT_IP_PER_MIN, RATE_LIMIT_IP_MCP_SETUP_PER_MIN and RATE_LIMIT_IP_AUTHENTICATED_PER_MIN at
 * 0): ten minutes of back-to-back scenarios from one loopback address create far more than 30 rooms
 * an hour, far more than 600 anonymous joins a minute, and, at a scenario every two seconds, more than
 * 6,000 MCP handshakes and 30,000 authenticated calls a minute from that one address; this soak is
 * about kills, not limits — test/topology/agents.test.ts runs the scenario with every default. The
 * per-credential limits stay at their defaults: the ledger's seats write as fast as they can and meet
 * the 120 writes a minute per credential, so its failed attempts show 429s, which it retries.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  acknowledgedProblems,
  errorSummary,
  type RoomAcknowledged,
  runAgentsScenario,
  scenarioLine,
} from '../support/agents-scenario.js';
import { startRedisDeployment } from '../support/agents-topology.js';
import { ensureBuilt } from '../support/built.js';
import { audit, newLedger, percentile, runRoom } from '../support/ledger.js';
import { startRedisServer } from '../support/redis-server.js';
import { hasNginx } from '../support/topology.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const KILL_EVERY_S = Number(process.env.SOAK_KILL_EVERY_S ?? 120);
const LEDGER_ROOMS = Number(process.env.SOAK_LEDGER_ROOMS ?? 3);

if (!hasNginx) throw new Error('the soak needs nginx (/usr/sbin/nginx)');
// The processes are the built service, as `npm start` runs it.
await ensureBuilt();
const redis = await startRedisServer({ aof: true });
if (redis === null) throw new Error('the soak needs redis-server');
const deployment = await startRedisDeployment(redis, {
  RATE_LIMIT_CREATE_PER_HOUR: '0',
  RATE_LIMIT_IP_PER_MIN: '0',
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
});
const base = deployment.base;

const started = Date.now();
const until = started + SECONDS * 1000;
const ledger = newLedger();
const ledgerLoad = Promise.all(Array.from({ length: LEDGER_ROOMS }, () => runRoom(ledger, () => base, until)));

const kills: { at: number; victim: number; restartMs: number }[] = [];
const killer = (async () => {
  for (;;) {
    const next = started + (kills.length + 1) * KILL_EVERY_S * 1000;
    if (next >= until) return;
    await sleep(next - Date.now());
    const victim = Math.floor(Math.random() * deployment.fleet.ports.length);
    deployment.fleet.kill(victim);
    const killedAt = Date.now();
    await deployment.fleet.restart(victim);
    kills.push({ at: Math.round((killedAt - started) / 1000), victim, restartMs: Date.now() - killedAt });
    console.log(
      `soak: t=${Math.round((killedAt - started) / 1000)} s kill -9 of process ${victim}, back in ${Date.now() - killedAt} ms`,
    );
  }
})();

let iterations = 0;
let agentCalls = 0;
let resolved = 0;
let roomsTotal = 0;
const chooses: number[] = [];
const errors: Record<string, number> = {};
let internal = 0;
const acknowledged: RoomAcknowledged[] = [];
const unresolvedComplete: string[] = [];
while (Date.now() < until) {
  const result = await runAgentsScenario({ base });
  iterations++;
  acknowledged.push(...result.acknowledged);
  chooses.push(...result.latencies.choose);
  agentCalls += Object.values(result.latencies).reduce((sum, list) => sum + list.length, 0) + result.errors.length;
  roomsTotal += result.rooms.length;
  resolved += result.rooms.filter((room) => room.resolved && room.problems.length === 0).length;
  internal += result.errors.filter((error) => error.internal).length;
  // A room whose every agent got its discuss acknowledged (so its choose too) must have resolved.
  const perRoom = result.agents / result.rooms.length;
  for (const room of result.rooms) {
    const books = result.acknowledged.find((book) => book.slug === room.slug);
    if (books && books.said.length === perRoom && (!room.resolved || room.problems.length > 0)) {
      unresolvedComplete.push(`${room.slug}: every agent finished, yet ${room.problems.join('; ')}`);
    }
  }
  for (const [key, count] of Object.entries(errorSummary(result))) errors[key] = (errors[key] ?? 0) + count;
  console.log(scenarioLine(`soak iteration ${iterations} (t=${Math.round((Date.now() - started) / 1000)} s)`, result));
  // What failed, as it happens: a run that stops early (the ledger gives up) prints no totals.
  if (result.errors.length > 0) console.log('  errors by kind:', errorSummary(result));
}
await Promise.all([ledgerLoad, killer]);

const ledgerAudit = await audit(ledger, base);
const lost = await acknowledgedProblems(base, acknowledged);
const ledger500 = ledger.failures['500'] ?? 0;
const problems = [
  ...(internal > 0 ? [`${internal} agent calls failed with a 500 / internal error`] : []),
  ...(ledger500 > 0 ? [`${ledger500} ledger write attempts answered 500`] : []),
  ...ledgerAudit.problems,
  ...unresolvedComplete,
  ...lost,
];

console.log(
  `\nsoak: ${SECONDS} s, ${kills.length} kill -9s (restart ≤ ${Math.max(0, ...kills.map((k) => k.restartMs))} ms), ` +
    `${iterations} scenario runs, ${agentCalls} agent calls, ${Object.values(errors).reduce((a, b) => a + b, 0)} failed ` +
    `(${internal} internal), ${resolved}/${roomsTotal} rooms resolved and verified, choose p50 ${percentile(chooses, 50).toFixed(0)} / ` +
    `p99 ${percentile(chooses, 99).toFixed(0)} ms`,
);
console.log(
  `soak ledger: ${ledger.acknowledged} REST writes acknowledged over ${ledger.rooms.length} rooms, ${ledgerAudit.receipts} receipts ` +
    `verified, failed attempts by status ${JSON.stringify(ledger.failures)}; ` +
    `${acknowledged.reduce((sum, room) => sum + room.participantIds.length + room.said.length, 0)} MCP writes acknowledged`,
);
if (Object.keys(errors).length > 0) console.log('soak errors by kind:', errors);
if (problems.length > 0) console.log('soak PROBLEMS:\n  ' + problems.slice(0, 50).join('\n  '));
else console.log('soak: no 500, every acknowledged write present');

await deployment.stop();
await redis.stop();
process.exit(problems.length > 0 ? 1 : 0);
