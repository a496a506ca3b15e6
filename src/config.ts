/** Every setting of the service, read from the environment and validated in one place. */
import path from 'node:path';
import { z } from 'zod';

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  STORE: z.enum(['sqlite', 'redis']).default('sqlite'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  REDIS_KEY_PREFIX: z.string().default('conclave:'),
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
});

export interface ServiceConfig {
  port: number;
  host: string;
  store: { kind: 'sqlite'; file: string } | { kind: 'redis'; url: string; keyPrefix: string };
  dataDir: string;
  baseUrl: string;
  signingKeySeed: string | undefined;
  adminToken: string | undefined;
  name: string;
  operatorName: string;
  operatorContact: string;
  logLevel: string;
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
        ? { kind: 'redis', url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX }
        : { kind: 'sqlite', file: path.join(dataDir, 'conclave.db') },
    dataDir,
    baseUrl: (e.PUBLIC_BASE_URL ?? `http://${hostForUrl}:${e.PORT}`).replace(/\/+$/, ''),
    signingKeySeed: e.CONCLAVE_SIGNING_KEY_SEED,
    adminToken: e.CONCLAVE_ADMIN_TOKEN,
    name: e.CONCLAVE_NAME,
    operatorName: e.CONCLAVE_OPERATOR_NAME,
    operatorContact: e.CONCLAVE_OPERATOR_CONTACT,
    logLevel: e.LOG_LEVEL,
  };
}
