/**
 * The deployments the 200-agent scenario (test/support/agents-scenario.ts) runs against, with the
 * service's DEFAULT limits (nothing zeroed): one embedded SQLite process, and three Redis-backed
 * processes behind the shipped nginx template with TRUST_PROXY as docker-compose.yml sets it (nginx's
 * X-Forwarded-For names the client).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type ChildService, spawnService } from './child-service.js';
import type { TestRedisServer } from './redis-server.js';
import { type Fleet, type Nginx, startFleet, startNginx } from './topology.js';

export interface RedisDeployment {
  base: string;
  fleet: Fleet;
  nginx: Nginx;
  stop(): Promise<void>;
}

/** Three processes on one Redis behind nginx, configured as the shipped compose file configures them. */
export async function startRedisDeployment(
  redis: TestRedisServer,
  extraEnv: Record<string, string> = {},
  processes = 3,
  /** A command each process is started through (spawnService's `wrapper`). */
  wrapper?: string[],
): Promise<RedisDeployment> {
  const env = {
    STORE: 'redis',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: `agents-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    // nginx's address, as compose names nginx's (docker-compose.yml): only its header is believed.
    TRUST_PROXY: '127.0.0.1',
    LOG_LEVEL: 'error',
    ...extraEnv,
  };
  const fleet = await startFleet(processes, env, wrapper);
  const nginx = await startNginx(fleet.ports.map((port) => `127.0.0.1:${port}`));
  return {
    base: nginx.base,
    fleet,
    nginx,
    async stop() {
      await nginx.stop();
      await fleet.stop();
    },
  };
}

/** One process on its embedded SQLite store, default limits; its data in `dataDir` if given (removed on stop). */
export function startEmbeddedProcess(
  wrapper?: string[],
  extraEnv: Record<string, string> = {},
  dataDir?: string,
): Promise<ChildService> {
  return spawnService(
    { LOG_LEVEL: 'error', ...extraEnv },
    { ...(wrapper ? { wrapper } : {}), ...(dataDir ? { dataDir } : {}) },
  );
}
