/** Every setting of the service, read from the environment and validated in one place. */
import path from 'node:path';
import { z } from 'zod';
import { type IssuerPolicy, normalizeOrigin } from './auth/issuers.js';
import type { RateLimitSettings } from './auth/rate-limit.js';
import { parseRedisUrl } from './store/redis-connection.js';

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  STORE: z.enum(['sqlite', 'redis']).default('sqlite'),
  /** One redis:// URL, or the nodes of a Redis Cluster, comma-separated. */
  REDIS_URL: z
    .string()
    .default('redis://127.0.0.1:6379')
    .superRefine((value, ctx) => {
      try {
        parseRedisUrl(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^REDIS_URL:?\s*/, '') });
      }
    }),
  /**
   * Behind a load balancer: whose X-Forwarded-For names the client. "true" (every hop) or the
   * proxies' addresses/CIDRs, comma-separated. Unset: the socket's peer is the client.
   */
  TRUST_PROXY: z
    .string()
    .regex(
      /^(true|false|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$/,
      'must be true, false, or addresses/CIDRs, comma-separated',
    )
    .optional(),
  /** Use the Cluster client even when REDIS_URL names a single node. */
  REDIS_CLUSTER: z.enum(['0', '1', 'true', 'false']).default('0'),
  /** Acknowledge a room write only after this many replicas have it (Redis WAIT); 0 = do not wait. */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).default(0),
  REDIS_WAIT_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  REDIS_KEY_PREFIX: z.string().default('conclave:'),
  /** A Redis command unanswered this long fails as 503 instead of hanging the request. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  CONCLAVE_SIGNING_KEY_SEED: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (a 32-byte Ed25519 seed)')
    .optional(),
  CONCLAVE_ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  CONCLAVE_NAME: z.string().default('Conclave'),
  CONCLAVE_OPERATOR_NAME: z.string().default('Conclave operator'),
  CONCLAVE_OPERATOR_CONTACT: z.string().default('mailto:operator@localhost'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Lets webhooks target loopback and private addresses (tests, private networks). */
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  /** Active webhooks one room may hold; registering past it is refused (docs/architecture.md, Engagement). */
  WEBHOOK_MAX_PER_ROOM: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** Room actors kept in memory (least recently used evicted; about 14 KiB each); others reload from the store. */
  ROOM_CACHE_SIZE: z.coerce.number().int().min(1).default(1000),
  /** Long-polls and SSE streams one process holds at once; past it, new ones get 503. */
  MAX_PARKED_CONNECTIONS: z.coerce.number().int().min(1).default(20_000),
  /** Requests per minute per client IP (01 §7); 0 disables the limiter. */
  RATE_LIMIT_IP_PER_MIN: z.coerce.number().int().min(0).default(600),
  /** Mutating requests per minute per credential (01 §7); 0 disables the limiter. */
  RATE_LIMIT_CREDENTIAL_PER_MIN: z.coerce.number().int().min(0).default(120),
  /** Comma-separated trusted HTTPS mandate issuer origins (08 §4.7); empty = any HTTPS issuer. */
  MANDATE_ISSUER_ALLOWLIST: z
    .string()
    .default('')
    .transform((text, ctx) => {
      const origins: string[] = [];
      const entries = text.split(',').map((e) => e.trim());
      for (const entry of entries.filter((e) => e !== '')) {
        try {
          origins.push(normalizeOrigin(entry));
        } catch {
          ctx.addIssue({ code: 'custom', message: `${entry} is not an http(s) origin` });
        }
      }
      return origins;
    }),
  /** Accept self-issued (did:key) mandates; unset = on without an allowlist, off with one (08 §4.7). */
  MANDATE_ALLOW_SELF_ISSUED: z.enum(['true', 'false']).optional(),
  /** Lets mandate issuers live on private addresses and plain http: local test issuers only. */
  MANDATE_ISSUER_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
});

export interface ServiceConfig {
  port: number;
  host: string;
  store:
    | { kind: 'sqlite'; file: string }
    | {
        kind: 'redis';
        url: string;
        /** REDIS_CLUSTER: use the Cluster client even for one node (several nodes in `url` always do). */
        cluster: boolean;
        keyPrefix: string;
        commandTimeoutMs: number;
        waitReplicas: number;
        waitTimeoutMs: number;
      };
  dataDir: string;
  baseUrl: string;
  signingKeySeed: string | undefined;
  adminToken: string | undefined;
  name: string;
  operatorName: string;
  operatorContact: string;
  logLevel: string;
  webhookAllowPrivate: boolean;
  webhookMaxPerRoom: number;
  maxParkedConnections: number;
  roomCacheSize: number;
  rateLimits: RateLimitSettings;
  trustProxy: true | string[] | undefined;
  mandateIssuers: IssuerPolicy;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`Invalid configuration: ${issue.path.join('.')} ${issue.message}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const hostForUrl =
    e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST;
  return {
    port: e.PORT,
    host: e.HOST,
    store:
      e.STORE === 'redis'
        ? {
            kind: 'redis',
            url: e.REDIS_URL,
            // Several nodes in REDIS_URL mean a Cluster by themselves (redis-connection.ts); this forces it.
            cluster: e.REDIS_CLUSTER === '1' || e.REDIS_CLUSTER === 'true',
            keyPrefix: e.REDIS_KEY_PREFIX,
            commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
            waitReplicas: e.REDIS_WAIT_REPLICAS,
            waitTimeoutMs: e.REDIS_WAIT_TIMEOUT_MS,
          }
        : { kind: 'sqlite', file: path.join(dataDir, 'conclave.db') },
    dataDir,
    baseUrl: (e.PUBLIC_BASE_URL ?? `http://${hostForUrl}:${e.PORT}`).replace(/\/+$/, ''),
    signingKeySeed: e.CONCLAVE_SIGNING_KEY_SEED,
    adminToken: e.CONCLAVE_ADMIN_TOKEN,
    name: e.CONCLAVE_NAME,
    operatorName: e.CONCLAVE_OPERATOR_NAME,
    operatorContact: e.CONCLAVE_OPERATOR_CONTACT,
    logLevel: e.LOG_LEVEL,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookMaxPerRoom: e.WEBHOOK_MAX_PER_ROOM,
    maxParkedConnections: e.MAX_PARKED_CONNECTIONS,
    roomCacheSize: e.ROOM_CACHE_SIZE,
    rateLimits: { ipPerMinute: e.RATE_LIMIT_IP_PER_MIN, credentialPerMinute: e.RATE_LIMIT_CREDENTIAL_PER_MIN },
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    mandateIssuers: {
      allowlist: e.MANDATE_ISSUER_ALLOWLIST,
      allowSelfIssued: e.MANDATE_ALLOW_SELF_ISSUED === undefined ? undefined : e.MANDATE_ALLOW_SELF_ISSUED === 'true',
      allowPrivate: e.MANDATE_ISSUER_ALLOW_PRIVATE === 'true',
    },
  };
}

function trustProxyOf(value: string | undefined): true | string[] | undefined {
  if (value === undefined || value === 'false') return undefined;
  return value === 'true' ? true : value.split(',');
}
