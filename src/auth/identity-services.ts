/**
 * Builds the identity side of the service from configuration: the identity store and rate counters
 * (SQLite + in-memory, or Redis for both so limits and grants hold across processes), the device
 * flow, and the mandate verifier's dependencies.
 */
import type { Keyring } from '../receipts/index.js';
import { connectRedisClient, createRedisClient, type RedisClient } from '../store/redis-connection.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../store/redis-store.js';
import { DeviceFlow } from './device-flow.js';
import type { IdentityStore, Revocation } from './identity-store.js';
import { RedisIdentityStore } from './identity-store-redis.js';
import { openSqliteIdentityStore } from './identity-store-sqlite.js';
import { createIssuerTrust, type IssuerPolicy } from './issuers.js';
import type { MandateDeps } from './mandates.js';
import { type KnownCredentials, MemoryKnownCredentials, RedisKnownCredentials } from './known-credentials.js';
import { MemoryRateCounters, type MandateRateCounter, type RequestRateCounter } from './rate-limit.js';
import { RedisRateCounters } from './rate-limit-redis.js';

export interface IdentityConfig {
  store:
    | { kind: 'sqlite'; file: string }
    | { kind: 'redis'; url: string; cluster?: boolean; keyPrefix: string; commandTimeoutMs?: number };
  adminTokenHash: string | null;
  issuers: IssuerPolicy;
}

export interface IdentityServices {
  store: IdentityStore;
  deviceFlow: DeviceFlow;
  /** What verifyMandate needs; `mandates.rateCaps` is also where recordMandateCall records. */
  mandates: MandateDeps;
  requestRates: RequestRateCounter;
  /** Credentials proven real, for the limits by caller (shared across processes on Redis). */
  knownCredentials: KnownCredentials;
  /** The service's own `revocations` for the discovery document. */
  revocations(): Promise<Revocation[]>;
  close(): Promise<void>;
}

export async function openIdentityServices(
  config: IdentityConfig,
  deps: { keyring: Keyring; now: () => number; baseUrl: () => string },
): Promise<IdentityServices> {
  let store: IdentityStore;
  let counters: RequestRateCounter & MandateRateCounter;
  let knownCredentials: KnownCredentials;
  let redis: RedisClient | null = null;
  if (config.store.kind === 'redis') {
    redis = createRedisClient(config.store.url, {
      cluster: config.store.cluster ?? false,
      commandTimeoutMs: config.store.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      role: 'commands',
    });
    await connectRedisClient(redis);
    store = new RedisIdentityStore(redis, config.store.keyPrefix);
    counters = new RedisRateCounters(redis, config.store.keyPrefix);
    knownCredentials = new RedisKnownCredentials(redis, config.store.keyPrefix, deps.now);
  } else {
    store = openSqliteIdentityStore(config.store.file);
    counters = new MemoryRateCounters();
    knownCredentials = new MemoryKnownCredentials(deps.now);
  }

  const deviceFlow = new DeviceFlow({
    store,
    keyring: deps.keyring,
    now: deps.now,
    baseUrl: deps.baseUrl,
    adminTokenHash: config.adminTokenHash,
  });
  const issuers = createIssuerTrust({
    ...config.issuers,
    keyring: deps.keyring,
    baseUrl: deps.baseUrl,
    isOwnRevoked: (jti) => store.isRevoked(jti),
  });

  return {
    store,
    deviceFlow,
    mandates: { issuers, rateCaps: counters, baseUrl: deps.baseUrl },
    requestRates: counters,
    knownCredentials,
    revocations: () => store.revocations(),
    async close() {
      await store.close();
      redis?.disconnect();
    },
  };
}
