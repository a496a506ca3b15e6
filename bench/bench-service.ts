/**
 * The service as the benchmarks run it: in this process, on a free loopback port, a fresh data
 * directory, rate limits off (a bench measures the transports, not the limiter).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function startBenchService(env: Record<string, string> = {}) {
  // Imported lazily: a forked load client may import this file and needs none of the service.
  const { loadConfig } = await import('../src/config.js');
  const { createService } = await import('../src/service.js');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-bench-'));
  const service = await createService(
    loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      ...env,
    }),
  );
  const base = (await service.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  service.services.baseUrl = base;
  return { service, base, dataDir };
}
