/** The service as a process: build from the environment, listen, and shut down gracefully on signals. */
import { configProblem, loadConfig } from './config.js';
import { LOW_FILE_LIMIT, openFileLimit } from './runtime/file-descriptors.js';
import { createService } from './service.js';

export async function runServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  const service = await createService(config);
  try {
    await service.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await service.close().catch(() => undefined);
    throw listenProblem(error, config.host, config.port);
  }
  service.app.log.info({ store: config.store.kind, base_url: config.baseUrl }, 'conclave listening');
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
