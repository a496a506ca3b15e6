/** The Redis store's maintenance passes: a room's history reclaimed, unsealed idempotency records purged. */
import { SEALED_BODY_PREFIX } from './common.js';
import type { IdempotencyRecord } from './port.js';
import type { DeadlineCalls, ScriptedRedis } from './redis-calls.js';
import { engagementKeys } from './redis-engagement-commands.js';
import type { RedisKeys } from './redis-keys.js';

export class RedisMaintenance {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly key: RedisKeys,
    private readonly keyPrefix: string,
    private readonly calls: DeadlineCalls,
    private readonly clock: () => number,
  ) {}

  async reclaimHistory(slug: string): Promise<number> {
    const engagement = engagementKeys(this.key.room(slug));
    const removed = await this.calls.call(() => this.redis.zcard(this.key.events(slug)));
    // One slot (the room's hash tag): one DEL. Due-index entries of the deliveries go as orphans.
    await this.calls.call(() =>
      this.redis.del(
        this.key.events(slug),
        this.key.eventIds(slug),
        engagement.webhooks,
        engagement.deliveries,
        engagement.openerWakes,
      ),
    );
    return removed;
  }

  /**
   * Scans every node's keyspace for idempotency keys (`<prefix>idem:<scope>`, `<room>:idem:<scope>`) and deletes those whose record
   * body is not sealed. SCAN walks the keyspace in steps, so Redis keeps serving meanwhile; each step
   * has the store's deadline of its own (the whole walk may take longer than one command may). Once a
   * walk completes a marker key says so, and later starts skip it: records written since are sealed.
   */
  async purgeUnsealedIdempotency(): Promise<number> {
    const done = `${this.keyPrefix}meta:idempotency-sealed`;
    if ((await this.calls.call(() => this.redis.get(done))) !== null) return 0;
    let removed = 0;
    const prefix = escapeGlob(this.keyPrefix);
    for (const [node, pattern] of scanNodes(this.redis).flatMap((n) => [
      [n, `${prefix}idem:*`] as const,
      [n, `${prefix}room:*:idem:*`] as const,
    ])) {
      let cursor = '0';
      do {
        const [next, keys] = await this.calls.call(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        for (const key of keys) {
          const text = await this.calls.call(() => this.redis.get(key));
          if (text === null || isSealedRecord(text)) continue;
          removed += await this.calls.call(() => this.redis.del(key));
        }
      } while (cursor !== '0');
    }
    await this.calls.call(() => this.redis.set(done, new Date(this.clock()).toISOString()));
    return removed;
  }
}

/** Every master of a Cluster, or the one server. */
export function scanNodes(redis: ScriptedRedis): Pick<ScriptedRedis, 'scan'>[] {
  const cluster = redis as unknown as { nodes?: (role: 'master') => Pick<ScriptedRedis, 'scan'>[] };
  return typeof cluster.nodes === 'function' ? cluster.nodes('master') : [redis];
}

export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

function isSealedRecord(text: string): boolean {
  try {
    const record = JSON.parse(text) as Partial<IdempotencyRecord>;
    return typeof record.body === 'string' && record.body.startsWith(SEALED_BODY_PREFIX);
  } catch {
    return false;
  }
}
