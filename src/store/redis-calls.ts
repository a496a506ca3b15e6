/**
 * How the Redis store talks to Redis: the room scripts it defines on its connection, and every store
 * operation bounded by the command timeout with Redis's errors in the port's vocabulary.
 */
import type { Redis } from 'ioredis';
import { StoreConflictError, StoreUnavailableError } from './port.js';
import { isTransientReply } from './redis-errors.js';
import type { EngagementRedis, RedisCalls } from './redis-engagement-commands.js';
import {
  COMPACT_ROOM_SCRIPT,
  EXPAND_ROOM_SCRIPT,
  GATHER_ROOM_SCRIPT,
  READ_ROOM_SCRIPT,
} from './redis-compact-scripts.js';
import type { CompactionCommands } from './redis-compaction.js';
import { FAIR_ACQUIRE_SCRIPT, FAIR_RELEASE_SCRIPT, LEAVE_LINE_SCRIPT } from './redis-room-lock.js';
import {
  COMMIT_SCRIPT,
  CONFLICT_REPLY,
  DELETE_ROOM_SCRIPT,
  LOAD_IF_CHANGED_SCRIPT,
  RENEW_LOCK_SCRIPT,
  REPAIR_DEADLINE_SCRIPT,
} from './redis-scripts.js';

export type Arg = string | number | Buffer;

export interface ScriptCommands {
  conclaveCommit(...args: Arg[]): Promise<[number, number, string, number, number]>;
  conclaveDeleteRoom(...args: Arg[]): Promise<number>;
  conclaveAcquireLock(...args: Arg[]): Promise<0 | [number, string | null, string | null, (string | null)[]?]>;
  conclaveLoadIfChanged(...args: Arg[]): Promise<(string | null)[] | null>;
  conclaveReleaseLock(...args: Arg[]): Promise<number>;
  conclaveLeaveLine(...args: Arg[]): Promise<number>;
  conclaveRenewLock(...args: Arg[]): Promise<number>;
  conclaveRepairDeadline(...args: Arg[]): Promise<number>;
}

export type ScriptedRedis = EngagementRedis & ScriptCommands & CompactionCommands;

/** Defines the room scripts on the commands connection. */
export function defineRoomCommands(redis: Redis): void {
  // The key count varies with the idempotency records: the caller passes it first.
  redis.defineCommand('conclaveCommit', { lua: COMMIT_SCRIPT });
  redis.defineCommand('conclaveDeleteRoom', { numberOfKeys: 9, lua: DELETE_ROOM_SCRIPT });
  // Compact rooms (redis-compaction.ts): the room hash, its compact value and its four history keys
  // (and, to compact, its lock).
  redis.defineCommand('conclaveReadRoom', { numberOfKeys: 6, lua: READ_ROOM_SCRIPT });
  redis.defineCommand('conclaveGatherRoom', { numberOfKeys: 6, lua: GATHER_ROOM_SCRIPT });
  redis.defineCommand('conclaveCompactRoom', { numberOfKeys: 7, lua: COMPACT_ROOM_SCRIPT });
  redis.defineCommand('conclaveExpandRoom', { numberOfKeys: 6, lua: EXPAND_ROOM_SCRIPT });
  redis.defineCommand('conclaveLoadIfChanged', { numberOfKeys: 1, lua: LOAD_IF_CHANGED_SCRIPT });
  redis.defineCommand('conclaveAcquireLock', { numberOfKeys: 4, lua: FAIR_ACQUIRE_SCRIPT });
  redis.defineCommand('conclaveReleaseLock', { numberOfKeys: 2, lua: FAIR_RELEASE_SCRIPT });
  redis.defineCommand('conclaveLeaveLine', { numberOfKeys: 3, lua: LEAVE_LINE_SCRIPT });
  redis.defineCommand('conclaveRenewLock', { numberOfKeys: 1, lua: RENEW_LOCK_SCRIPT });
  redis.defineCommand('conclaveRepairDeadline', { numberOfKeys: 1, lua: REPAIR_DEADLINE_SCRIPT });
}

export class DeadlineCalls implements RedisCalls {
  constructor(private readonly deadlineMs: number) {}

  /**
   * One store operation, answered or failed within the command timeout of its first command.
   * ioredis times each command from when it is written, and auto-pipelining writes a command only
   * once the pipeline ahead of it on the same node is answered: against a frozen Redis a command
   * would otherwise wait out the timeout of the one before it first.
   */
  async call<T>(operation: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`Redis store unavailable: no answer within ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
    });
    try {
      return await Promise.race([operation(), deadline]);
    } catch (error) {
      throw toStoreError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  async bestEffort(operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch {
      // See the callers for why losing this write is acceptable.
    }
  }
}

/**
 * Redis's errors in the port's vocabulary: a conflict, the store unavailable (every reply that says
 * "not now", redis-errors.ts, and whatever ioredis throws about connections), or, for a reply that
 * says the request itself is wrong, the error as it is (a bug: 500).
 */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreConflictError || error instanceof StoreUnavailableError) return error;
  if (!(error instanceof Error)) return error;
  if (error.name === 'ReplyError') {
    if (error.message.startsWith(CONFLICT_REPLY)) {
      return new StoreConflictError(error.message.slice(CONFLICT_REPLY.length).trim());
    }
    if (!isTransientReply(error.message)) return error;
  }
  // Everything else ioredis throws is about the connection: closed, not writable, timed out.
  return new StoreUnavailableError(`Redis store unavailable: ${error.message}`, { cause: error });
}
