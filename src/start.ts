/**
 * How the service process starts (docs/operators.md, Start): listening first, loading second.
 * Loading the app's modules is most of a cold start (about a second of CPU on a 2-core machine, in
 * Node's module loader), so the entry listens before it loads them: it reads the few variables the
 * socket needs, listens with the service's own server (src/http/early-server.ts), answers liveness
 * at once and 503 with Retry-After to the rest, then imports the app and hands it that server.
 *
 * Whatever this entry cannot judge the way src/config.ts would (a value it does not accept, a
 * HOST of `localhost`, which fastify binds on each of its addresses) and any failure to listen
 * skips the early listener: the process then starts as it did before it existed, and the full
 * configuration and listen report the problem, naming the variable, and exit non-zero. A problem
 * found after listening (another variable, the store refusing) ends the process the same way.
 */
import { existsSync } from 'node:fs';
import module from 'node:module';
import { hostname } from 'node:os';
import { DEFAULT_HEADERS_TIMEOUT_MS } from './http/http-server.js';
import { type EarlyServer, listenEarly } from './http/early-server.js';
import { slowRequestLogFields } from './http/slow-requests.js';
import { capHeapGrowth } from './runtime/heap-growth.js';
import { SERVICE_VERSION } from './service-version.js';

const LOG_LEVELS = { fatal: 60, error: 50, warn: 40, info: 30, debug: 20, trace: 10, silent: Infinity } as const;

export interface EarlySettings {
  port: number;
  host: string;
  headersTimeoutMs: number;
  logLevel: keyof typeof LOG_LEVELS;
}

/** zod's coerced number, bounded and whole (config.ts: `z.coerce.number().int().min().max()`). */
function wholeNumber(value: string | undefined, fallback: number, min: number, max: number): number | null {
  if (value === undefined) return fallback;
  const number = Number(value);
  return Number.isInteger(number) && number >= min && number <= max ? number : null;
}

/**
 * The settings the socket needs, read as src/config.ts reads them; null when one of them is not
 * valid there or is not one this entry listens with (config.ts then reports it).
 */
export function earlySettings(env: NodeJS.ProcessEnv): EarlySettings | null {
  const port = wholeNumber(env.PORT, 3000, 0, 65535);
  const host = env.HOST ?? '127.0.0.1';
  const headersTimeoutMs = wholeNumber(env.HEADERS_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS, 1000, 60_000);
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (port === null || headersTimeoutMs === null || !Object.hasOwn(LOG_LEVELS, logLevel)) return null;
  // fastify listens on every address of `localhost` (127.0.0.1 and ::1); a server it did not listen
  // with itself gets one: left to fastify.
  if (host === '' || host === 'localhost') return null;
  return { port, host, headersTimeoutMs, logLevel: logLevel as EarlySettings['logLevel'] };
}

/** A log line as pino writes it (the app's logger is not loaded yet). */
function logInfo(level: EarlySettings['logLevel'], fields: Record<string, unknown>, message: string): void {
  if (LOG_LEVELS[level] > LOG_LEVELS.info) return;
  const line = {
    level: LOG_LEVELS.info,
    time: Date.now(),
    pid: process.pid,
    hostname: hostname(),
    ...fields,
    msg: message,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Listens early when it can (null when it leaves listening to the app, as described above). */
export async function listenFirst(env: NodeJS.ProcessEnv): Promise<EarlyServer | null> {
  const settings = earlySettings(env);
  if (settings === null) return null;
  const early = await listenEarly({ ...settings, version: SERVICE_VERSION }).catch(() => null);
  if (early === null) return null;
  logInfo(settings.logLevel, { address: early.url }, 'conclave listening');
  // Until the app's logger takes over (app.ts), a request cut off for slowness is logged here.
  early.timing.reportTo((cut) => logInfo(settings.logLevel, slowRequestLogFields(cut), 'request refused'));
  return early;
}

/**
 * The app: from the build's one-file bundle (scripts/bundle-server.ts) when there is one, which
 * loads in about two thirds of the time or less; module by module otherwise (under tsx, or a dist/
 * compiled without `npm run build`).
 */
export async function loadApp(): Promise<AppModule> {
  const bundle = bundledApp();
  if (bundle !== null) return (await import(bundle.href)) as AppModule;
  return import('./server-process.js');
}

export type AppModule = typeof import('./server-process.js');

/** The build's one-file bundle of the app, or null when there is none. */
export function bundledApp(): URL | null {
  const bundle = new URL('./bundle/server-process.js', import.meta.url);
  return existsSync(bundle) ? bundle : null;
}

/**
 * The process: `npm start` (src/main.ts) and `conclave serve`. `load` brings the app in once the
 * process listens (a test holds it there: test/support/hold-app/).
 */
export async function startServer(
  env: NodeJS.ProcessEnv = process.env,
  load: () => Promise<AppModule> = loadApp,
): Promise<void> {
  // Node 22.1+ keeps the compiled modules in a cache directory, so the next start skips parsing them.
  module.enableCompileCache?.();
  // Before anything big is allocated: garbage may pile up to twice the live heap, not four times.
  capHeapGrowth();
  const early = await listenFirst(env);
  let exitOnSignal: ((signal: NodeJS.Signals) => void) | null = null;
  if (early) {
    // A stop asked for while loading: nothing is served yet, so nothing to drain.
    exitOnSignal = () => {
      early.server.closeAllConnections();
      early.server.close();
      process.exit(0);
    };
    process.once('SIGTERM', exitOnSignal);
    process.once('SIGINT', exitOnSignal);
  }
  const { runServer } = await load();
  await runServer(env, {
    early,
    signalsTaken: () => {
      if (exitOnSignal === null) return;
      process.off('SIGTERM', exitOnSignal);
      process.off('SIGINT', exitOnSignal);
    },
  });
}
