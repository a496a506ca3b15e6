/**
 * Composition root: config → store → keys → room registry → deadline scheduler → HTTP app.
 * main.ts calls this for the real process; end-to-end tests call it with a temp data dir and a
 * manual clock.
 */
import type { FastifyInstance } from 'fastify';
import { GuessThrottle } from './auth/guess-throttle.js';
import { type IdentityServices, openIdentityServices } from './auth/identity-services.js';
import { hashSecret } from './auth/secrets.js';
import type { ServiceConfig } from './config.js';
import { Engagement } from './engagement/engagement.js';
import { buildHttpApp } from './http/app.js';
import type { EarlyServer } from './http/early-server.js';
import { eventStreamRoute } from './http/event-stream-route.js';
import type { Capabilities } from './http/meta.js';
import { registerLogRoutes } from './http/log-routes.js';
import { registerOAuthRoutes } from './http/oauth-routes.js';
import { rateLimitHook } from './http/rate-limit-hook.js';
import { limitsCallsByCaller } from './auth/caller-limits.js';
import { mcpExtension } from './mcp/index.js';
import type { Services } from './operations/services.js';
import { OPERATIONS } from './operations/table.js';
import { loadKeyring } from './receipts/index.js';
import { type Clock, systemClock } from './runtime/clock.js';
import { Presence } from './runtime/presence.js';
import { RoomRegistry } from './runtime/registry.js';
import { type UpgradeReport, upgradeStoredRooms } from './runtime/upgrade.js';
import { observeCommit } from './observability/domain.js';
import { ServiceMetrics } from './observability/metrics.js';
import { DeadlineScheduler } from './runtime/scheduler.js';
import { type RetentionTimer, startRetention } from './store/retention.js';
import { secureDataDir } from './store/file-modes.js';
import { openStore } from './store/index.js';
import type { RoomStore } from './store/port.js';
import type { RedisStore } from './store/redis-store.js';
import { DEFAULT_INTEGRATOR_OPTIONS, Integrator } from './tlog/integrator.js';
import { TransparencyLog } from './tlog/log.js';
import { frozenLogOrigin } from './tlog/note-signer.js';
import { PositionLabels } from './tlog/position-labels.js';
import { Witnesses } from './tlog/witness.js';
import { SERVICE_VERSION } from './service-version.js';

export { SERVICE_VERSION };

export const CAPABILITIES: Capabilities = { mcp: true, mandates: true, longPoll: true, sse: true, webhooks: true };

export interface Service {
  app: FastifyInstance;
  services: Services;
  scheduler: DeadlineScheduler;
  store: RoomStore;
  /** Long-polls, streams and the webhook outbox (tests drive retries with engagement.webhooks.runDue()). */
  engagement: Engagement;
  /** Device flow, hosted keys, mandate verification deps (identity.mandates) and rate counters. */
  identity: IdentityServices;
  /** Sequences receipts into the transparency log while this process holds the log lease (tests drive integrateNow()). */
  integrator: Integrator;
  /** The start-up upgrade of rooms stored in an older shape (null when it failed). */
  upgraded: Promise<UpgradeReport | null>;
  /** The retention sweep (ROOM_RETENTION_DAYS), or null when it is off. */
  retention: RetentionTimer | null;
  close(): Promise<void>;
}

export async function createService(
  config: ServiceConfig,
  options: {
    clock?: Clock;
    /** A server already listening (src/start.ts) for the app to take over; without it the app makes its own. */
    server?: EarlyServer;
  } = {},
): Promise<Service> {
  const clock = options.clock ?? systemClock;
  secureDataDir(config.dataDir);
  const store = await openStore({ ...config.store, clock: () => clock.now() });
  // Idempotency records an earlier version stored raw (credentials included) are dropped: they are
  // only a 24 h replay cache, and a retry with their key simply runs again.
  await store.purgeUnsealedIdempotency();
  const keyring = await loadKeyring({
    dataDir: config.dataDir,
    ...(config.signingKeySeed ? { seedHex: config.signingKeySeed } : {}),
  });

  let scheduler: DeadlineScheduler | null = null;
  let integrator: Integrator | null = null;
  let metrics: ServiceMetrics | null = null;
  const registry = new RoomRegistry({
    store,
    clock,
    keyring,
    baseUrl: () => services.baseUrl,
    maxCachedRooms: config.roomCacheSize,
    maxCachedBytes: config.roomCacheBytes,
    onCommit: (notice) => {
      scheduler?.note(notice.nextDeadline);
      engagement.onCommit(notice);
      if (metrics) observeCommit(metrics, notice);
    },
    onRemove: () => metrics?.room('deleted'),
    onBatch: (turns, commitSeconds) => metrics?.batch(turns, commitSeconds),
    onLock: (waitSeconds, acquired) => metrics?.lock(waitSeconds, acquired),
    onConflict: () => metrics?.commitConflict(),
  });
  const engagement = new Engagement(
    {
      store,
      states: registry,
      clock,
      onDelivery: (outcome) => metrics?.delivery(outcome),
      onNotice: (channel) => metrics?.commitNotice(channel),
    },
    {
      maxParked: config.maxParkedConnections,
      parkedShares: config.parkedShares,
      webhookAllowPrivate: config.webhookAllowPrivate,
      webhookStandardSignature: config.webhookStandardSignature,
      webhookMaxPerRoom: config.webhookMaxPerRoom,
      webhookMaxPerSeat: config.webhookMaxPerSeat,
      webhookMaxPerOriginPerRoom: config.webhookMaxPerOriginPerRoom,
      webhookMaxPerOrigin: config.webhookMaxPerOrigin,
      webhookMaxPerOriginPerAddress: config.webhookMaxPerOriginPerAddress,
      redis:
        config.store.kind === 'redis'
          ? {
              url: config.store.url,
              cluster: config.store.cluster,
              keyPrefix: config.store.keyPrefix,
              commitNotices: config.store.commitNotices,
            }
          : null,
      userAgent: `Conclave-Webhooks/${SERVICE_VERSION}`,
    },
  );
  metrics = new ServiceMetrics({
    cachedRooms: () => registry.cachedRooms,
    cachedBytes: () => registry.cachedBytes,
    parkedWaiters: () => engagement.waiters.parked,
    openStreams: () => engagement.streams.size,
    pendingDeliveries: () => store.engagement.pendingDeliveries(),
    trippedOrigins: () => engagement.webhooks.trippedOrigins(),
    noticeRooms: () => engagement.notices?.rooms.subscribed ?? 0,
    logIntegrator: () => integrator?.leader ?? false,
  });
  const adminTokenHash = config.adminToken ? hashSecret(config.adminToken) : null;
  // The registry and identity read services.baseUrl lazily: tests set it once the port is known.
  const services: Services = {
    registry,
    store,
    keyring,
    clock,
    baseUrl: config.baseUrl,
    auth: { adminTokenHash },
    info: {
      name: config.name,
      version: SERVICE_VERSION,
      operatorName: config.operatorName,
      operatorContact: config.operatorContact,
    },
    engagement,
    mandates: null,
    requestRates: null,
    hostedAccount: null,
    presence: new Presence(),
    observer: metrics,
  };
  const baseUrl = () => services.baseUrl;
  const tlog = new TransparencyLog(
    store.tlog,
    keyring,
    baseUrl,
    config.logWitnesses.map((witness) => witness.key),
  );
  services.tlog = tlog;
  const frozenTlog = new TransparencyLog(store.frozenTlog, keyring, baseUrl, [], {
    origin: frozenLogOrigin,
    entriesWithheld:
      'The frozen log’s entry bundles are withheld: its leaves are whole receipts, which name rooms, options, votes and statements the read wall hides.',
  });
  services.frozenTlog = frozenTlog;
  const positions = new PositionLabels(keyring);
  services.positions = positions;
  const identity = await openIdentityServices(
    { store: config.store, adminTokenHash, issuers: config.mandateIssuers },
    { keyring, now: () => clock.now(), baseUrl },
  );
  services.mandates = identity.mandates;
  const rateLimits = {
    counter: identity.requestRates,
    known: identity.knownCredentials,
    settings: { ...config.rateLimits, ...config.callerLimits },
  };
  // With every limit by caller off, a request pays for no limiter hook, and on the embedded store
  // (one process, an in-memory table) for no bookkeeping of proven credentials no one will read.
  // On Redis the table is shared: another process may have the limits on.
  const limitsByCaller = limitsCallsByCaller(rateLimits.settings);
  services.requestRates =
    limitsByCaller || config.store.kind === 'redis'
      ? rateLimits
      : { counter: rateLimits.counter, settings: rateLimits.settings };
  services.guesses =
    config.guessLimitPerMinute > 0
      ? new GuessThrottle(identity.mandates.rateCaps, () => clock.now(), config.guessLimitPerMinute)
      : null;
  services.hostedAccount = async (hostedKey, mandateJti) => {
    const key = await identity.deviceFlow.hostedKey(hostedKey);
    return key !== null && key.mandateJti === mandateJti ? key.publicId : null;
  };
  const app = await buildHttpApp(services, OPERATIONS, {
    logLevel: config.logLevel,
    trustProxy: config.trustProxy,
    sockets: config.sockets,
    capabilities: CAPABILITIES,
    extensions: [
      mcpExtension({ services, operations: OPERATIONS, limits: rateLimits }),
      eventStreamRoute(services),
      (app) => registerOAuthRoutes(app, { deviceFlow: identity.deviceFlow, baseUrl, guesses: services.guesses }),
      (app) => registerLogRoutes(app, tlog, { prefix: '/log', witnessed: config.logWitnesses.length > 0 }),
      (app) =>
        registerLogRoutes(app, frozenTlog, {
          prefix: '/log/v1',
          witnessed: true,
          present: async () => ((await frozenTlog.latest())?.size ?? 0) > 0,
        }),
    ],
    onRequest: limitsByCaller ? [rateLimitHook(rateLimits, () => clock.now())] : [],
    revocations: () => identity.revocations(),
    metrics,
    ...(options.server ? { server: options.server } : {}),
  });
  scheduler = new DeadlineScheduler(
    store,
    clock,
    (slug) => registry.tick(slug),
    (error, slug) => app.log.error({ err: error, slug }, 'deadline tick failed'),
  );
  await scheduler.start();
  await engagement.start(app.log);
  integrator = new Integrator(
    store,
    () => tlog.noteSigner(),
    positions,
    (error, message) => app.log.error({ err: error }, message),
    DEFAULT_INTEGRATOR_OPTIONS,
    new Witnesses(config.logWitnesses, store.tlog, (error, message) => app.log.warn({ err: error }, message)),
  );
  integrator.start();
  // Rooms stored in an older shape are upgraded in the background; reads and writes never wait.
  const upgraded = upgradeStoredRooms(store, (slug) => registry.tick(slug)).then(
    (report) => {
      if (!report.alreadyCurrent) app.log.info(report, 'stored rooms upgraded to the current snapshot format');
      return report;
    },
    (error: unknown) => {
      app.log.error(
        { err: error },
        'upgrading stored rooms failed; rooms upgrade when touched, and the pass runs again at the next start',
      );
      return null;
    },
  );

  // REDIS_COMPACT_AFTER_SECONDS: a compaction that fails leaves its room expanded for the next sweep.
  (store as Partial<Pick<RedisStore, 'reportCompactionErrors'>>).reportCompactionErrors?.((error) =>
    app.log.warn({ err: error }, 'room compaction failed; the room stays expanded until the next sweep'),
  );

  // ROOM_RETENTION_DAYS: concluded rooms give back their history (docs/operations-backup.md, Retention).
  const retention =
    config.roomRetentionDays === null
      ? null
      : startRetention(store, {
          retentionDays: config.roomRetentionDays,
          now: () => clock.now(),
          onError: (error) =>
            app.log.error({ err: error }, 'room retention pass failed; it runs again within the hour'),
        });

  // Runs when app.close() begins, before it waits for requests in flight: parked waits are among them.
  app.addHook('preClose', async () => {
    await engagement.stop();
  });

  return {
    app,
    services,
    scheduler,
    store,
    engagement,
    identity,
    integrator,
    upgraded,
    retention,
    /**
     * Graceful drain: stop taking connections (new requests get 503), answer parked long-polls and
     * end streams so their clients go elsewhere, finish requests and turns in flight (their locks are
     * released as each turn ends), then close the store.
     */
    async close() {
      await upgraded;
      scheduler?.stop();
      retention?.stop();
      await app.close();
      await registry.drain();
      // Last: receipts the drained turns committed are sequenced before the store closes.
      await integrator?.integrateNow();
      await integrator?.stop();
      await store.close();
      await identity.close();
    },
  };
}
