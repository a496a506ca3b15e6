/** The service as a process: build from the environment, listen, and shut down gracefully on signals. */
import { loadConfig } from './config.js';
import { createService } from './service.js';

export async function runServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  const service = await createService(config);
  await service.app.listen({ port: config.port, host: config.host });
  service.app.log.info({ store: config.store.kind, base_url: config.baseUrl }, 'conclave listening');

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
