/**
 * The deadline index on Redis (docs/architecture.md, Storage): sorted sets sharded by slug, read
 * with every candidate checked against its room's own next_deadline, and repaired as it is read.
 */
import type { DeadlineCalls, ScriptedRedis } from './redis-calls.js';
import type { RedisKeys } from './redis-keys.js';

export class RedisDeadlineIndex {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly key: RedisKeys,
    private readonly calls: DeadlineCalls,
  ) {}

  /**
   * Due rooms from the deadline index, each checked against the room's own next_deadline, which
   * is the truth. An entry that disagrees (left by a crash between commit and index update, or by
   * two index updates landing out of order) is repaired, so a stale entry cannot keep waking the
   * scheduler for a room that has nothing due; the room is still listed when its true deadline
   * has passed.
   */
  dueRooms(nowMs: number, limit: number): Promise<string[]> {
    if (limit <= 0) return Promise.resolve([]);
    return this.calls.call(async () => {
      const indexes = [...this.key.deadlineShards, this.key.legacyDeadlines];
      const pages = await Promise.all(
        indexes.map((key) => this.redis.zrangebyscore(key, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, limit)),
      );
      const candidates: { key: string; slug: string; score: number }[] = [];
      pages.forEach((flat, i) => {
        for (let j = 0; j < flat.length; j += 2) {
          candidates.push({ key: indexes[i]!, slug: flat[j]!, score: Number(flat[j + 1]) });
        }
      });
      candidates.sort((a, b) => a.score - b.score);
      candidates.splice(limit);
      const truths = await Promise.all(
        candidates.map(async ({ slug }) => {
          const stored = await this.redis.hget(this.key.room(slug), 'next_deadline');
          return stored ? Number(stored) : null;
        }),
      );
      const repairs: Promise<void>[] = [];
      const due = candidates.filter(({ key, slug, score }, i) => {
        const truth = truths[i] ?? null;
        if (key === this.key.legacyDeadlines) {
          // An entry of the old single index moves to its shard as it is read.
          repairs.push(
            this.calls.bestEffort(async () => {
              if (truth !== null) await this.redis.zadd(this.key.deadlines(slug), 'NX', truth, slug);
              await this.redis.conclaveRepairDeadline(key, slug, score, '');
            }),
          );
        } else if (truth !== score) {
          repairs.push(this.calls.bestEffort(() => this.redis.conclaveRepairDeadline(key, slug, score, truth ?? '')));
        }
        return truth !== null && truth <= nowMs;
      });
      await Promise.all(repairs);
      // A room can stand in its shard and in the old index at once.
      return [...new Set(due.map(({ slug }) => slug))];
    });
  }

  nextDeadline(): Promise<number | null> {
    return this.calls.call(async () => {
      const firsts = await Promise.all(
        [...this.key.deadlineShards, this.key.legacyDeadlines].map((key) => this.redis.zrange(key, 0, 0, 'WITHSCORES')),
      );
      const scores = firsts.filter((first) => first[1] !== undefined).map((first) => Number(first[1]));
      return scores.length === 0 ? null : Math.min(...scores);
    });
  }
}
