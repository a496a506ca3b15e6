/**
 * The engagement store's Redis commands (redis-engagement.ts): its scripts, the key layout of a
 * room's engagement keys, and the wrappers the owning store lends it.
 */
import type { Redis } from 'ioredis';
import {
  CLAIM_SCRIPT,
  CREATE_WEBHOOK_SCRIPT,
  DEFER_SCRIPT,
  DISABLE_WEBHOOK_SCRIPT,
  ENQUEUE_SCRIPT,
  PRUNE_SCRIPT,
  RESCORE_DUE_SCRIPT,
  SETTLE_SCRIPT,
} from './redis-engagement-scripts.js';

type Arg = string | number;

export interface EngagementCommands {
  conclaveCreateWebhook(...args: Arg[]): Promise<number>;
  conclaveDisableWebhook(...args: Arg[]): Promise<number>;
  conclaveEnqueue(...args: Arg[]): Promise<number>;
  conclaveClaim(...args: Arg[]): Promise<number>;
  conclaveDefer(...args: Arg[]): Promise<number>;
  conclaveSettle(...args: Arg[]): Promise<number>;
  conclaveRescoreDue(...args: Arg[]): Promise<number>;
  conclavePruneDelivery(...args: Arg[]): Promise<number>;
}

export type EngagementRedis = Redis & EngagementCommands;

export function defineEngagementCommands(redis: Redis): void {
  redis.defineCommand('conclaveCreateWebhook', { numberOfKeys: 1, lua: CREATE_WEBHOOK_SCRIPT });
  redis.defineCommand('conclaveDisableWebhook', { numberOfKeys: 1, lua: DISABLE_WEBHOOK_SCRIPT });
  redis.defineCommand('conclaveEnqueue', { numberOfKeys: 2, lua: ENQUEUE_SCRIPT });
  redis.defineCommand('conclaveClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
  redis.defineCommand('conclaveDefer', { numberOfKeys: 1, lua: DEFER_SCRIPT });
  redis.defineCommand('conclaveSettle', { numberOfKeys: 2, lua: SETTLE_SCRIPT });
  redis.defineCommand('conclaveRescoreDue', { numberOfKeys: 1, lua: RESCORE_DUE_SCRIPT });
  redis.defineCommand('conclavePruneDelivery', { numberOfKeys: 1, lua: PRUNE_SCRIPT });
}

/** The wrappers of the owning store: error mapping, and writes whose loss is tolerated. */
export interface RedisCalls {
  call<T>(operation: () => Promise<T>): Promise<T>;
  bestEffort(operation: () => Promise<unknown>): Promise<void>;
}

/** The engagement keys of a room (its room key plus a suffix), for deleteRoom. */
export function engagementKeys(roomKey: string) {
  return {
    webhooks: `${roomKey}:webhooks`,
    deliveries: `${roomKey}:deliveries`,
    openerWakes: `${roomKey}:openerwakes`,
  };
}
