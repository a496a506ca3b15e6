/**
 * Issue 27's acceptance scenario in the suite: 200 agents in 10 rooms of 20, half on each MCP era,
 * join_room → wait → choose → discuss, with the DEFAULT limits — against one embedded SQLite process
 * and against three Redis processes behind the shipped nginx template. Zero errors of any kind, and
 * every room resolved with a receipt chain that verifies. Latency is the bench's business
 * (bench/cases/agents.ts), never asserted here.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  acknowledgedProblems,
  errorSummary,
  roomProblems,
  runAgentsScenario,
  scenarioLine,
} from '../support/agents-scenario.js';
import { type RedisDeployment, startEmbeddedProcess, startRedisDeployment } from '../support/agents-topology.js';
import type { ChildService } from '../support/child-service.js';
import { startRedisServer } from '../support/redis-server.js';
import { hasNginx } from '../support/topology.js';

const AGENTS = Number(process.env.AGENTS_SCENARIO_AGENTS ?? 200);
const ROOMS = Number(process.env.AGENTS_SCENARIO_ROOMS ?? 10);

describe('200 MCP agents in 10 rooms, default limits', () => {
  let embedded: ChildService | null = null;
  afterAll(async () => {
    await embedded?.stop();
  });

  it('one embedded SQLite process: 0 errors, every receipt verifies', async () => {
    embedded = await startEmbeddedProcess();
    const result = await runAgentsScenario({ base: embedded.base, agents: AGENTS, rooms: ROOMS });
    console.log(scenarioLine('embedded', result));
    expect(errorSummary(result)).toEqual({});
    expect(roomProblems(result)).toEqual([]);
    expect(await acknowledgedProblems(embedded.base, result.acknowledged)).toEqual([]);
    expect(result.rooms).toHaveLength(ROOMS);
    expect(Object.keys(result.eras).sort()).toEqual(['2025-11-25', '2026-07-28']);
  }, 180_000);
});

const redis = hasNginx ? await startRedisServer() : null;

describe.skipIf(!hasNginx || redis === null)(
  '200 MCP agents, three Redis processes behind nginx, default limits',
  () => {
    let deployment: RedisDeployment | null = null;
    afterAll(async () => {
      await deployment?.stop();
      await redis?.stop();
    });

    it('0 errors of any kind, every room resolved with a receipt that verifies', async () => {
      deployment = await startRedisDeployment(redis!);
      const result = await runAgentsScenario({ base: deployment.base, agents: AGENTS, rooms: ROOMS });
      console.log(scenarioLine('redis ×3 behind nginx', result));
      expect(errorSummary(result)).toEqual({});
      expect(roomProblems(result)).toEqual([]);
      expect(await acknowledgedProblems(deployment.base, result.acknowledged)).toEqual([]);
      expect(result.rooms).toHaveLength(ROOMS);
      expect(Object.keys(result.eras).sort()).toEqual(['2025-11-25', '2026-07-28']);
    }, 240_000);
  },
);
