/**
 * Composition root: config → store → keys → room registry → deadline scheduler → HTTP app.
 * main.ts calls this for the real process; end-to-end tests call it with a temp data dir and a
 * manual clock.
 */
import { mkdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { hashSecret } from './auth/secrets.js';
import type { ServiceConfig } from './config.js';
import { buildHttpApp } from './http/app.js';
import type { Capabilities } from './http/meta.js';
import type { Services } from './operations/services.js';
import { OPERATIONS } from './operations/table.js';
import { loadKeyring } from './receipts/index.js';
import { type Clock, systemClock } from './runtime/clock.js';
import { RoomRegistry } from './runtime/registry.js';
import { DeadlineScheduler } from './runtime/scheduler.js';
import { openStore } from './store/index.js';
import type { RoomStore } from './store/port.js';

export const SERVICE_VERSION = '0.1.0';

export const CAPABILITIES: Capabilities = { mcp: false, mandates: false, longPoll: false, sse: false, webhooks: false };

export interface Service {
  app: FastifyInstance;
  services: Services;
  scheduler: DeadlineScheduler;
  store: RoomStore;
  close(): Promise<void>;
}

export async function createService(config: ServiceConfig, options: { clock?: Clock } = {}): Promise<Service> {
  const clock = options.clock ?? systemClock;
  if (config.store.kind === 'sqlite') await mkdir(config.dataDir, { recursive: true });
  const store = await openStore({ ...config.store, clock: () => clock.now() });
  const keyring = await loadKeyring({
    dataDir: config.dataDir,
    ...(config.signingKeySeed ? { seedHex: config.signingKeySeed } : {}),
  });

  let scheduler: DeadlineScheduler | null = null;
  const registry = new RoomRegistry({
    store,
    clock,
    keyring,
    baseUrl: () => services.baseUrl,
    onCommit: (notice) => scheduler?.note(notice.nextDeadline),
  });
  // biome-ignore lint/style/useConst: the registry reads services.baseUrl lazily
  let services: Services;
  services = {
    registry,
    store,
    keyring,
    clock,
    baseUrl: config.baseUrl,
    auth: { adminTokenHash: config.adminToken ? hashSecret(config.adminToken) : null },
    info: {
      name: config.name,
      version: SERVICE_VERSION,
      operatorName: config.operatorName,
      operatorContact: config.operatorContact,
    },
  };
  const app = await buildHttpApp(services, OPERATIONS, { logLevel: config.logLevel, capabilities: CAPABILITIES });
  scheduler = new DeadlineScheduler(
    store,
    clock,
    (slug) => registry.tick(slug),
    (error, slug) => app.log.error({ err: error, slug }, 'deadline tick failed'),
  );
  await scheduler.start();

  return {
    app,
    services,
    scheduler,
    store,
    async close() {
      scheduler?.stop();
      await app.close();
      await registry.drain();
      await store.close();
    },
  };
}
