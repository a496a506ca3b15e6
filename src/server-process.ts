/** The service as a process: build from the environment, listen, and shut down gracefully on signals. */
import { isIPv4 } from 'node:net';
import { LISTEN_BACKLOG } from './http/app.js';
import type { EarlyServer } from './http/early-server.js';
import { configProblem, loadConfig, type ServiceConfig, trustProxyWarning } from './config.js';
import { LOW_FILE_LIMIT, openFileLimit } from './runtime/file-descriptors.js';
import { capHeapGrowth } from './runtime/heap-growth.js';
import { createService } from './service.js';
import { warmUp } from './warm-up.js';

export interface RunOptions {
  /**
   * The server the entry already listens with (src/start.ts): the app takes it over instead of
   * listening itself. null or absent: the app listens.
   */
  early?: EarlyServer | null;
  /** Called once this process's own SIGTERM/SIGINT handlers are installed (the entry's give way). */
  signalsTaken?: () => void;
}

export async function runServer(env: NodeJS.ProcessEnv = process.env, options: RunOptions = {}): Promise<void> {
  // Before anything big is allocated: garbage may pile up to twice the live heap, not four times.
  capHeapGrowth();
  const early = options.early ?? null;
  const config = loadConfig(env);
  const service = await createService(config, early ? { server: early } : {});
  service.services.warming = config.warmupTurns > 0;
  warnOnDefaultBaseUrl(config, service.app.log);
  const trustWarning = trustProxyWarning(config);
  if (trustWarning) service.app.log.warn({ variable: 'TRUST_PROXY' }, trustWarning);
  if (early) {
    // Listening since the entry's first moments; from this turn on the app answers every request.
    try {
      await service.app.ready();
    } catch (error) {
      await service.close().catch(() => undefined);
      throw error;
    }
    early.handOver();
    service.app.log.info(
      { store: config.store.kind, base_url: config.baseUrl, address: early.url },
      'conclave serving',
    );
  } else {
    try {
      await service.app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
    } catch (error) {
      await service.close().catch(() => undefined);
      throw listenProblem(error, config.host, config.port);
    }
    service.app.log.info({ store: config.store.kind, base_url: config.baseUrl }, 'conclave listening');
    service.app.log.info({ store: config.store.kind, base_url: config.baseUrl }, 'conclave serving');
  }
  // Each signing key's position key (a hash and a scalar multiplication, 50-80 ms here) is derived
  // on first use: now, while not yet ready, rather than inside the first seal's wake of everyone
  // parked on the room (docs/performance.md, One commit, ten thousand long-polls).
  service.services.positions?.all();
  warnOnLowFileLimit(service.app.log);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    service.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    service.close().then(
      () => process.exit(0),
      (error) => {
        service.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  options.signalsTaken?.();

  // Listening first (and the signals handled), so liveness answers at once; ready once the first
  // burst will meet compiled code (src/warm-up.ts), within WARMUP_MAX_MS however slow the machine.
  if (config.warmupTurns > 0) {
    const warmed = await warmUp(config.warmupTurns, config.warmupMaxMs);
    if (closing) return;
    const level = warmed.failures > 0 ? 'warn' : 'info';
    service.app.log[level](
      { turns: warmed.turns, ms: warmed.ms, failures: warmed.failures, skipped: warmed.skipped },
      'warmed up',
    );
  }
  service.services.warming = false;
  service.app.log.info('conclave ready');
}

/** Whether a listen address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name === '::1') return true;
  const v4 = name.startsWith('::ffff:') ? name.slice('::ffff:'.length) : name;
  return isIPv4(v4) && v4.startsWith('127.');
}

/**
 * The warning an operator must not miss, or null: without PUBLIC_BASE_URL the service names itself
 * after its listen address, and that name is signed into every receipt (`iss`, `aud`) and every room
 * URL. On loopback that is right (a local run); reachable from elsewhere it is almost surely wrong,
 * and receipts signed with it cannot be re-signed later.
 */
export function defaultBaseUrlWarning(
  config: Pick<ServiceConfig, 'baseUrlDefaulted' | 'host' | 'baseUrl'>,
): string | null {
  if (!config.baseUrlDefaulted || isLoopbackHost(config.host)) return null;
  return (
    `PUBLIC_BASE_URL IS NOT SET while listening on ${config.host}: receipts and room URLs will name ` +
    `${config.baseUrl}, which clients elsewhere cannot reach, and signed receipts keep it for good. ` +
    'Set PUBLIC_BASE_URL to the address clients use (e.g. PUBLIC_BASE_URL=https://conclave.example.org).'
  );
}

function warnOnDefaultBaseUrl(
  config: ServiceConfig,
  log: { warn(details: Record<string, unknown>, message: string): void },
): void {
  const warning = defaultBaseUrlWarning(config);
  if (warning) log.warn({ variable: 'PUBLIC_BASE_URL', base_url: config.baseUrl }, warning);
}

/**
 * Node has already raised the soft descriptor limit to the hard one; a low hard limit is the start
 * command's to raise (compose `ulimits`, `docker run --ulimit`, systemd `LimitNOFILE`).
 */
function warnOnLowFileLimit(log: { warn(details: Record<string, unknown>, message: string): void }): void {
  const limit = openFileLimit();
  if (limit === null || limit >= LOW_FILE_LIMIT) return;
  log.warn(
    { open_file_limit: limit, recommended: 65_536 },
    'the file-descriptor limit is low: each client connection holds one; raise the hard limit (ulimit -Hn, compose ulimits, systemd LimitNOFILE)',
  );
}

/**
 * A failed listen in terms of the variable to change: the bare `getaddrinfo ENOTFOUND` or
 * `EADDRINUSE` names neither HOST nor PORT. Other errors pass through as they are.
 */
export function listenProblem(error: unknown, host: string, port: number): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return configProblem('HOST', host, 'does not resolve to an address: use an IP address of this machine');
    case 'EADDRNOTAVAIL':
      return configProblem('HOST', host, 'is not an address of this machine: use one of its own, or 0.0.0.0 for all');
    case 'EADDRINUSE':
      return configProblem(
        'PORT',
        String(port),
        `is already in use on ${host}: stop the other process or pick another`,
      );
    case 'EACCES':
      return configProblem(
        'PORT',
        String(port),
        'needs privileges this user lacks (ports below 1024): use a higher one',
      );
    default:
      return error;
  }
}
