/**
 * One busy room, two service processes on one Redis: agents join through one process and read,
 * long-poll, choose and discuss through both, all at once, so reads keep meeting a room the other
 * process has just changed. No call may answer 500 (docs/architecture.md, "One room, many
 * readers"); the race this guards is replayed step by step in
 * test/integration/runtime/read-race-redis.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { connectModern, type McpSession } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call } from '../support/service.js';

const redis = await startRedisServer();
const AGENTS = 24;
/** Rounds of read, long-poll, choice and message per agent after its join. */
const ROUNDS = 3;

describe.skipIf(redis === null)('one room written and read through two processes at once', () => {
  let processes: ChildService[] = [];
  let sessions: McpSession[] = [];
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `race-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    // Every agent calls from 127.0.0.1: the per-address limit is not what this test is about.
    RATE_LIMIT_IP_PER_MIN: '100000',
    RATE_LIMIT_CREDENTIAL_PER_MIN: '100000',
  };

  beforeAll(async () => {
    processes = await Promise.all([spawnService(env, { capture: true }), spawnService(env, { capture: true })]);
    sessions = await Promise.all(processes.map((p) => connectModern(`${p.base}/mcp`)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.close()));
    await Promise.all(processes.map((p) => p.stop()));
    await redis?.stop();
  });

  it('answers every join, read, long-poll, MCP wait, choice and message without a 500', async () => {
    const [a, b] = processes as [ChildService, ChildService];
    /** An MCP tool call as a status: a refusal's envelope code, 500 for internal.error. */
    const tool = async (session: McpSession, name: string, args: Record<string, unknown>) => {
      const outcome = await session.call(name, args);
      const code = outcome.isError ? outcome.body?.error?.code : undefined;
      return { status: outcome.isError ? (code === 'internal.error' ? 500 : 400) : 200, body: outcome.body };
    };
    const created = await call(a.base, 'POST', '/api/rooms', {
      body: {
        question: 'Which option wins?',
        options: ['a', 'b'],
        config: { type: 'persistent', max_total_deliberation_messages: 5000 },
      },
    });
    expect(created.status).toBe(200);
    const { slug } = created.body;
    const answers: { step: string; status: number; body: unknown }[] = [];
    const step = async (name: string, done: Promise<{ status: number; body: any }>) => {
      const answer = await done;
      answers.push({ step: name, status: answer.status, body: answer.body });
      return answer;
    };

    await Promise.all(
      Array.from({ length: AGENTS }, async (_, i) => {
        const [mine, other] = i % 2 === 0 ? [a, b] : [b, a];
        const session = sessions[i % 2]!;
        const joined = await step(
          'join',
          call(mine.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: `agent ${i}` } }),
        );
        const token = joined.body.participant_token as string | undefined;
        if (!token) return;
        for (let round = 0; round < ROUNDS; round++) {
          await Promise.all([
            step('read', call(other.base, 'GET', `/api/rooms/${slug}`, { token })),
            step('next-action', call(mine.base, 'GET', `/api/rooms/${slug}/next-action?wait=0`, { token })),
            step('mcp wait', tool(session, 'wait', { slug, token, wait_seconds: 0 })),
            step(
              'choose',
              call(other.base, 'POST', `/api/rooms/${slug}/choose`, {
                token,
                body: { choice: (i + round) % 3 ? 'a' : 'b' },
              }),
            ),
            step(
              'discuss',
              call(round % 2 ? other.base : mine.base, 'POST', `/api/rooms/${slug}/discuss`, {
                token,
                body: { body: `round ${round} from ${i}` },
              }),
            ),
          ]);
        }
        await step('read', call(mine.base, 'GET', `/api/rooms/${slug}`, { token }));
      }),
    );

    const failures = answers.filter((answer) => answer.status >= 500);
    expect(failures).toEqual([]);
    expect(answers.filter((answer) => answer.step === 'join' && answer.status === 200)).toHaveLength(AGENTS);
    for (const p of processes) expect(p.output()).not.toMatch(/missing from room/);
    // Both processes serve the room with every seat.
    for (const p of processes) {
      const room = await call(p.base, 'GET', `/api/rooms/${slug}`, { token: created.body.creator_token });
      expect(room.status).toBe(200);
    }
  }, 60_000);
});
