import { defineConfig } from 'vitest/config';

/**
 * Files that assert how fast something happens on the wall clock (a wake within 100 ms, a /readyz
 * answer within 1 s, 1,000 webhooks within 2 s) or drive several service processes, nginx and Redis
 * at once (the topology suites). They run one at a time, after the rest, with the machine to
 * themselves: beside another test file they would measure the neighbour, not the service.
 */
const ALONE = [
  'test/topology/**/*.test.ts',
  'test/faults/**/*.test.ts',
  'test/adversary/webhooks.test.ts',
  'test/adversary/sessions.test.ts',
  'test/adversary/connections.test.ts',
  'test/adversary/connections-parked.test.ts',
  'test/e2e/engagement-long-poll.test.ts',
  'test/e2e/engagement-redis.test.ts',
  'test/e2e/store-outage.test.ts',
  'test/integration/store/redis.test.ts',
  'test/integration/store/redis-room-lease.test.ts',
];

const shared = {
  environment: 'node',
  pool: 'forks',
  testTimeout: 30_000,
  hookTimeout: 60_000,
} as const;

export default defineConfig({
  test: {
    reporters: ['default'],
    // The built service and command line that child-process tests start (test/support/built.ts).
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        // Everything else, two files at a time: one worker left a 2-core machine about a third idle
        // while files waited on child processes, sockets and timers (1,029 s -> 904 s for the suite).
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ALONE,
          maxWorkers: 2,
          // One module graph per worker instead of one per file: a fresh graph per file imported src,
          // fastify, the MCP SDK and xstate again for each of ~140 files (this group: 389 s -> 218 s
          // of wall on a 2-core machine). Files must leave no module state behind (CONTRIBUTING.md).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          // One module graph for the whole group too: its 17 files imported everything afresh each
          // (alone group 270 s -> 239 s). The same rule holds: files leave no module state behind.
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
