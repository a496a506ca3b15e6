/** Every setting of the service, read from the environment and validated in one place. */
import path from 'node:path';
import { z } from 'zod';
import { type IssuerPolicy, normalizeOrigin } from './auth/issuers.js';
import type { CallerLimitSettings } from './auth/caller-limits.js';
import type { RateLimitSettings } from './auth/rate-limit.js';
import { parseRedisUrl } from './store/redis-connection.js';
import { parseWitnesses, type WitnessConfig } from './tlog/witness.js';

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
        // The entry is not quoted back: a Redis URL may carry a password.
        const reason = (error as Error).message.replace(/^REDIS_URL:?\s*/, '').replace(/^"[^"]*"/, 'an entry');
        ctx.addIssue({ code: 'custom', message: reason });
      }
    }),
  /**
   * Behind a load balancer: the proxies' addresses/CIDRs, comma-separated, whose X-Forwarded-For
   * names the client (the right-most entry no trusted proxy wrote). Unset: the socket's peer is the
   * client. "true" trusts every hop, so any client names itself: accepted, with a warning at start
   * (trustProxyWarning).
   */
  TRUST_PROXY: z
    .string()
    .regex(
      /^(true|false|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$/,
      'must be true, false, or addresses/CIDRs, comma-separated',
    )
    .optional(),
  /** Percent of MAX_PARKED_CONNECTIONS one client address may hold (100 = no per-address share). */
  PARKED_SHARE_PER_ADDRESS_PERCENT: z.coerce.number().min(0.01).max(100).default(10),
  /** Percent of MAX_PARKED_CONNECTIONS one credential (token, mandate issuer+subject) may hold. */
  PARKED_SHARE_PER_CREDENTIAL_PERCENT: z.coerce.number().min(0.01).max(100).default(2),
  /** Open sockets one client address may hold; unset = derived from the descriptor limit, 0 = no cap. */
  MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).optional(),
  /** Milliseconds a client has to send a request's headers before it gets 408 and is closed. */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).max(60_000).default(10_000),
  /** Request-body bytes the process holds at once (one address: a tenth); at least one body of the 4 MiB limit. */
  MAX_BODY_BYTES_IN_FLIGHT: z.coerce.number().int().min(4_194_304).default(268_435_456),
  /** Use the Cluster client even when REDIS_URL names a single node. */
  REDIS_CLUSTER: z.enum(['0', '1', 'true', 'false']).default('0'),
  /** Acknowledge a room write only after this many replicas have it (Redis WAIT); 0 = do not wait. */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).default(0),
  REDIS_WAIT_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  REDIS_KEY_PREFIX: z.string().default('conclave:'),
  /** A Redis command unanswered this long fails as 503 instead of hanging the request. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /**
   * Seconds a concluded room stays idle (no new event) before its Redis keys are compacted into one
   * compressed value, about a tenth of the memory (docs/operators.md, Redis memory); 0 = never compact.
   */
  REDIS_COMPACT_AFTER_SECONDS: z.coerce.number().int().min(0).max(31_536_000).default(600),
  /**
   * How commit notices travel between processes on Redis (7 or later): `sharded`, each room's own
   * channel, heard only by the processes waiting on it; `both`, also the broadcast channel of
   * versions before it, for the length of a rolling upgrade (docs/operators.md, Upgrading).
   */
  COMMIT_NOTICES: z.enum(['sharded', 'both']).default('sharded'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Witnesses that cosign the transparency log's checkpoints: comma-separated `<url> <verifier key>`. */
  LOG_WITNESSES: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        parseWitnesses(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
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
  WEBHOOK_STANDARD_SIGNATURE: z.enum(['true', 'false']).default('false'),
  /** Active webhooks one room may hold; registering past it is refused (docs/architecture.md, Engagement). */
  WEBHOOK_MAX_PER_ROOM: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** Active webhooks one seat (or the operator) may hold in a room. */
  WEBHOOK_MAX_PER_SEAT: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Active webhooks of one room that may POST to one origin (scheme, host, port). */
  WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Active webhooks across the service that may POST to one origin. */
  WEBHOOK_MAX_PER_ORIGIN: z.coerce.number().int().min(1).max(1_000_000).default(200),
  /** Webhooks to one origin still awaiting the receiver's consent that one client address (an IPv6 /64) may hold across the service. */
  WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** Room actors kept in memory (least recently used evicted; about 14 KiB each); others reload from the store. */
  ROOM_CACHE_SIZE: z.coerce.number().int().min(1).default(1000),
  /** Calls run through a throwaway copy of the service at start-up, after listening and before /readyz answers 200, so the first burst meets compiled code (src/warm-up.ts); 0 disables. */
  WARMUP_TURNS: z.coerce.number().int().min(0).default(2400),
  /** The most time the start-up warm-up may take, in ms: it stops sending calls then, so a process is ready within seconds however slow the machine. */
  WARMUP_MAX_MS: z.coerce.number().int().min(0).default(3000),
  /**
   * What the cached room actors may weigh together, in bytes (an upper estimate of their resident
   * size); the least recently used are evicted past it. docs/architecture.md, Memory.
   */
  ROOM_CACHE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(32 * 1024 * 1024),
  /** Days after its conclusion a room's history is reclaimed (store/retention.ts); 0 or unset = kept for ever. */
  ROOM_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(0),
  /** Long-polls and SSE streams one process holds at once; past it, new ones get 503. */
  MAX_PARKED_CONNECTIONS: z.coerce.number().int().min(1).default(20_000),
  /** Wrong passwords, invites or tokens per minute per (room, client address); 0 disables (auth/guess-throttle.ts). */
  GUESS_LIMIT_PER_MIN: z.coerce.number().int().min(0).default(5),
  /** Requests per minute per client IP (docs/operators.md, Configuration); 0 disables the limiter. */
  RATE_LIMIT_IP_PER_MIN: z.coerce.number().int().min(0).default(600),
  /** Mutating requests per minute per credential (docs/operators.md, Configuration); 0 disables the limiter. */
  RATE_LIMIT_CREDENTIAL_PER_MIN: z.coerce.number().int().min(0).default(120),
  /** Rooms one client address may create per hour (every transport, any credential); 0 disables. */
  RATE_LIMIT_CREATE_PER_HOUR: z.coerce.number().int().min(0).default(30),
  /** Requests of every kind per known credential (token, or a mandate's issuer and subject); 0 disables. */
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: z.coerce.number().int().min(0).default(600),
  /** Requests per external mandate issuer, all its subjects together; 0 disables. */
  RATE_LIMIT_ISSUER_PER_MIN: z.coerce.number().int().min(0).default(12_000),
  /** Requests with a known credential per client IP (a loose ceiling for agent hosts); 0 disables. */
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: z.coerce.number().int().min(0).default(30_000),
  /** MCP messages other than tool calls (initialize, notifications, tools/list) per client IP; 0 disables. */
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: z.coerce.number().int().min(0).default(6_000),
  /** Comma-separated trusted HTTPS mandate issuer origins (docs/operators.md, Mandates and the device flow); empty = any HTTPS issuer. */
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
  /** Accept self-issued (did:key) mandates; unset = on without an allowlist, off with one (docs/operators.md, Mandates and the device flow). */
  MANDATE_ALLOW_SELF_ISSUED: z.enum(['true', 'false']).optional(),
  /** Lets mandate issuers live on private addresses and plain http: local test issuers only. */
  MANDATE_ISSUER_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
});

type Variable = keyof typeof envSchema.shape;

/**
 * A working value for every variable, shown beside its problem. Typed over the schema, so a new
 * variable does not compile without one.
 */
export const CONFIG_EXAMPLES: Readonly<Record<Variable, string>> = {
  PORT: '3000',
  HOST: '0.0.0.0',
  STORE: 'redis',
  REDIS_URL: 'redis://127.0.0.1:6379',
  TRUST_PROXY: '10.0.0.0/8',
  PARKED_SHARE_PER_ADDRESS_PERCENT: '10',
  PARKED_SHARE_PER_CREDENTIAL_PERCENT: '2',
  MAX_CONNECTIONS_PER_ADDRESS: '512',
  HEADERS_TIMEOUT_MS: '10000',
  MAX_BODY_BYTES_IN_FLIGHT: '268435456',
  REDIS_CLUSTER: 'true',
  REDIS_WAIT_REPLICAS: '1',
  REDIS_WAIT_TIMEOUT_MS: '1000',
  REDIS_KEY_PREFIX: 'conclave:',
  REDIS_COMMAND_TIMEOUT_MS: '2000',
  REDIS_COMPACT_AFTER_SECONDS: '600',
  COMMIT_NOTICES: 'sharded',
  DATA_DIR: '/var/lib/conclave',
  PUBLIC_BASE_URL: 'https://conclave.example.org',
  CONCLAVE_SIGNING_KEY_SEED: '$(openssl rand -hex 32)',
  CONCLAVE_ADMIN_TOKEN: '$(openssl rand -hex 32)',
  CONCLAVE_NAME: 'Conclave',
  CONCLAVE_OPERATOR_NAME: 'Example Org',
  CONCLAVE_OPERATOR_CONTACT: 'mailto:ops@example.org',
  LOG_LEVEL: 'info',
  WEBHOOK_ALLOW_PRIVATE: 'false',
  WEBHOOK_STANDARD_SIGNATURE: 'true',
  WEBHOOK_MAX_PER_ROOM: '2000',
  WEBHOOK_MAX_PER_SEAT: '20',
  WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: '20',
  WEBHOOK_MAX_PER_ORIGIN: '200',
  WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS: '20',
  ROOM_CACHE_SIZE: '1000',
  WARMUP_TURNS: '2400',
  WARMUP_MAX_MS: '3000',
  ROOM_CACHE_BYTES: '33554432',
  MAX_PARKED_CONNECTIONS: '20000',
  GUESS_LIMIT_PER_MIN: '5',
  RATE_LIMIT_IP_PER_MIN: '600',
  RATE_LIMIT_CREDENTIAL_PER_MIN: '120',
  RATE_LIMIT_CREATE_PER_HOUR: '30',
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '600',
  RATE_LIMIT_ISSUER_PER_MIN: '12000',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '30000',
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '6000',
  MANDATE_ISSUER_ALLOWLIST: 'https://issuer.example.org',
  MANDATE_ALLOW_SELF_ISSUED: 'true',
  MANDATE_ISSUER_ALLOW_PRIVATE: 'false',
  ROOM_RETENTION_DAYS: '90',
  LOG_WITNESSES:
    'https://witness.example.org/ witness.example.org/w1+b60f6e21+BAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB',
};

/** Variables whose values are credentials (or may carry one, as a Redis URL's password): never echoed. */
const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'CONCLAVE_SIGNING_KEY_SEED',
  'CONCLAVE_ADMIN_TOKEN',
  'REDIS_URL',
]);

/** One variable that cannot be used as it is set. */
export interface ConfigProblem {
  variable: string;
  /** What is wrong with the value, phrased to follow the variable's name. */
  problem: string;
  example: string;
}

/** Every invalid variable at once, so an operator fixes them in one pass. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(
      [
        `Invalid configuration: ${problems.length} variable${problems.length === 1 ? '' : 's'} to fix`,
        ...problems.map((p) => `  ${p.variable}: ${p.problem} (example: ${p.variable}=${p.example})`),
      ].join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/** A problem found while starting (a directory, a listen address) that one variable explains. */
export function configProblem(variable: Variable, value: string, problem: string): ConfigError {
  return new ConfigError([
    { variable, problem: `${shown(variable, value)} ${problem}`, example: CONFIG_EXAMPLES[variable] },
  ]);
}

function shown(variable: string, value: unknown): string {
  if (SECRET_VARIABLES.has(variable)) return '(value hidden)';
  const text = String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

function problemOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int' ? 'must be a whole number' : `must be a ${issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_small':
      return issue.origin === 'string' ? issue.message : `must be at least ${issue.minimum}`;
    case 'too_big':
      return `must be at most ${issue.maximum}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'must be an absolute URL' : issue.message;
    default:
      return issue.message;
  }
}

function problemsOf(error: z.ZodError, env: NodeJS.ProcessEnv): ConfigProblem[] {
  const seen = new Set<string>();
  const problems: ConfigProblem[] = [];
  for (const issue of error.issues) {
    const variable = String(issue.path[0]);
    if (seen.has(variable)) continue;
    seen.add(variable);
    problems.push({
      variable,
      problem: `${shown(variable, env[variable])} ${problemOf(issue)}`,
      example: CONFIG_EXAMPLES[variable as Variable] ?? '',
    });
  }
  return problems;
}

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
        /** REDIS_COMPACT_AFTER_SECONDS in ms; null = never compact. */
        compactAfterMs: number | null;
        /** COMMIT_NOTICES (engagement/redis-fanout.ts). */
        commitNotices: 'sharded' | 'both';
      };
  dataDir: string;
  baseUrl: string;
  /** PUBLIC_BASE_URL was unset: baseUrl was made from HOST and PORT (server-process.ts warns). */
  baseUrlDefaulted: boolean;
  signingKeySeed: string | undefined;
  /** Witnesses offered every checkpoint (docs/transparency-log.md, Witnesses). */
  logWitnesses: WitnessConfig[];
  adminToken: string | undefined;
  name: string;
  operatorName: string;
  operatorContact: string;
  logLevel: string;
  webhookAllowPrivate: boolean;
  /** WEBHOOK_STANDARD_SIGNATURE: Standard Webhooks entries after the protocol's in Webhook-Signature (docs/agents.md, Webhooks). */
  webhookStandardSignature: boolean;
  webhookMaxPerRoom: number;
  webhookMaxPerSeat: number;
  webhookMaxPerOriginPerRoom: number;
  webhookMaxPerOrigin: number;
  webhookMaxPerOriginPerAddress: number;
  maxParkedConnections: number;
  roomCacheSize: number;
  /** Start-up warm-up turns (src/warm-up.ts); 0 skips it. */
  warmupTurns: number;
  warmupMaxMs: number;
  roomCacheBytes: number;
  /** ROOM_RETENTION_DAYS; null = retention off. */
  roomRetentionDays: number | null;
  rateLimits: RateLimitSettings;
  /** Wrong guesses per minute per (room, client address); the other guess limits scale with it; 0 = off. */
  guessLimitPerMinute: number;
  callerLimits: CallerLimitSettings;
  trustProxy: true | string[] | undefined;
  /** Shares of the parking pool per client address and per credential, in percent. */
  parkedShares: { addressPercent: number; credentialPercent: number };
  /** Socket limits (http/connection-guard.ts): per-address cap (undefined = derived) and header timeout. */
  sockets: { maxPerAddress: number | undefined; headersTimeoutMs: number; bodyBytesInFlight: number };
  mandateIssuers: IssuerPolicy;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, env));
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
            compactAfterMs: e.REDIS_COMPACT_AFTER_SECONDS === 0 ? null : e.REDIS_COMPACT_AFTER_SECONDS * 1000,
            commitNotices: e.COMMIT_NOTICES,
          }
        : { kind: 'sqlite', file: path.join(dataDir, 'conclave.db') },
    dataDir,
    baseUrl: (e.PUBLIC_BASE_URL ?? `http://${hostForUrl}:${e.PORT}`).replace(/\/+$/, ''),
    baseUrlDefaulted: e.PUBLIC_BASE_URL === undefined,
    signingKeySeed: e.CONCLAVE_SIGNING_KEY_SEED,
    logWitnesses: parseWitnesses(e.LOG_WITNESSES),
    adminToken: e.CONCLAVE_ADMIN_TOKEN,
    name: e.CONCLAVE_NAME,
    operatorName: e.CONCLAVE_OPERATOR_NAME,
    operatorContact: e.CONCLAVE_OPERATOR_CONTACT,
    logLevel: e.LOG_LEVEL,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookStandardSignature: e.WEBHOOK_STANDARD_SIGNATURE === 'true',
    webhookMaxPerRoom: e.WEBHOOK_MAX_PER_ROOM,
    webhookMaxPerSeat: e.WEBHOOK_MAX_PER_SEAT,
    webhookMaxPerOriginPerRoom: e.WEBHOOK_MAX_PER_ORIGIN_PER_ROOM,
    webhookMaxPerOrigin: e.WEBHOOK_MAX_PER_ORIGIN,
    webhookMaxPerOriginPerAddress: e.WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS,
    maxParkedConnections: e.MAX_PARKED_CONNECTIONS,
    roomCacheSize: e.ROOM_CACHE_SIZE,
    warmupTurns: e.WARMUP_TURNS,
    warmupMaxMs: e.WARMUP_MAX_MS,
    roomCacheBytes: e.ROOM_CACHE_BYTES,
    roomRetentionDays: e.ROOM_RETENTION_DAYS === 0 ? null : e.ROOM_RETENTION_DAYS,
    rateLimits: {
      ipPerMinute: e.RATE_LIMIT_IP_PER_MIN,
      credentialPerMinute: e.RATE_LIMIT_CREDENTIAL_PER_MIN,
      createPerHour: e.RATE_LIMIT_CREATE_PER_HOUR,
    },
    guessLimitPerMinute: e.GUESS_LIMIT_PER_MIN,
    callerLimits: {
      credentialCallsPerMinute: e.RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN,
      issuerPerMinute: e.RATE_LIMIT_ISSUER_PER_MIN,
      authenticatedIpPerMinute: e.RATE_LIMIT_IP_AUTHENTICATED_PER_MIN,
      mcpSetupPerMinute: e.RATE_LIMIT_IP_MCP_SETUP_PER_MIN,
    },
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    parkedShares: {
      addressPercent: e.PARKED_SHARE_PER_ADDRESS_PERCENT,
      credentialPercent: e.PARKED_SHARE_PER_CREDENTIAL_PERCENT,
    },
    sockets: {
      maxPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      bodyBytesInFlight: e.MAX_BODY_BYTES_IN_FLIGHT,
    },
    mandateIssuers: {
      allowlist: e.MANDATE_ISSUER_ALLOWLIST,
      allowSelfIssued: e.MANDATE_ALLOW_SELF_ISSUED === undefined ? undefined : e.MANDATE_ALLOW_SELF_ISSUED === 'true',
      allowPrivate: e.MANDATE_ISSUER_ALLOW_PRIVATE === 'true',
    },
  };
}

/**
 * The warning an operator must not miss, or null: TRUST_PROXY=true believes every hop, so the
 * client-written left-most X-Forwarded-For entry becomes the client address, and every per-address
 * limit (requests, room creation, guesses, parked streams) counts whatever address the client
 * chose to write, including someone else's.
 */
export function trustProxyWarning(config: Pick<ServiceConfig, 'trustProxy'>): string | null {
  if (config.trustProxy !== true) return null;
  return (
    'TRUST_PROXY=true TRUSTS EVERY HOP: the client address is the left-most X-Forwarded-For entry, which ' +
    'the client writes itself, so every per-address limit counts whatever address a client claims ' +
    "(or its victim's). Name the proxies instead (e.g. TRUST_PROXY=172.31.240.10 or 10.0.0.0/8; " +
    'docs/operators.md, Behind a proxy).'
  );
}

function trustProxyOf(value: string | undefined): true | string[] | undefined {
  if (value === undefined || value === 'false') return undefined;
  return value === 'true' ? true : value.split(',');
}
