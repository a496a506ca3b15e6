/** Process entry: build the service from the environment, listen, and shut down gracefully. */
import { loadConfig } from './config.js';
import { createService } from './service.js';

async function main(): Promise<void> {
  const config = loadConfig();
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

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
