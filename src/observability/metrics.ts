/**
 * The service's Prometheus metrics (`GET /metrics`, text format 0.0.4), on a registry of its own so
 * several services in one process (tests) keep separate figures. What moves with load: requests
 * per route and status with their latency, room batches (turns per batch, commit latency), room
 * locks (wait, timeouts) and commit conflicts, store outages answered, and gauges read at scrape
 * time (cached rooms, parked long-polls, open event streams, webhook outbox depth), beside the
 * process's own figures (CPU, memory, event-loop lag).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryOutcome } from '../store/engagement-port.js';
import { LOOP_DELAY_RESOLUTION_MS } from './loop-delay.js';

/** What the service reports as it happens, beside the HTTP figures (src/observability/domain.ts). */
export interface Observer {
  /** One MCP tool call: its error code (null when it succeeded) and how long it took. */
  toolCall(tool: string, errorCode: string | null, seconds: number): void;
  /** One mandate verification for a call: `ok`, or the error code it was refused with. */
  mandateVerification(result: string): void;
}

/** How a webhook attempt ended, as the outbox settles it (webhook-worker.ts). */
export type AttemptOutcome = DeliveryOutcome['kind'];

export interface MetricSources {
  cachedRooms(): number;
  /** Their weight together (RoomRegistry.cachedBytes), held under ROOM_CACHE_BYTES. */
  cachedBytes(): number;
  parkedWaiters(): number;
  openStreams(): number;
  /** Pending webhook deliveries (the whole deployment's outbox); may fail while the store is away. */
  pendingDeliveries(): Promise<number>;
  /** Receiving origins this process holds back after timeouts (webhook-breaker.ts). */
  trippedOrigins(): number;
  /** Whether this process holds the transparency log's lease (it sequences receipts). */
  logIntegrator?(): boolean;
  /** Rooms whose commit notices this process is subscribed to (Redis mode). */
  noticeRooms?(): number;
}

const RATE_LIMITED = 'rate_limit.exceeded';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class ServiceMetrics implements Observer {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly batchTurns: Histogram;
  private readonly commitSeconds: Histogram;
  private readonly lockWaitSeconds: Histogram;
  private readonly lockTimeouts: Counter;
  private readonly commitConflicts: Counter;
  private readonly storeOutages: Counter;
  private readonly toolCalls: Counter<'tool'>;
  private readonly toolErrors: Counter<'tool' | 'code'>;
  private readonly toolSeconds: Histogram<'tool'>;
  private readonly rooms: Counter<'change'>;
  private readonly decisionsOpened: Counter<'mechanism'>;
  private readonly decisionsSealed: Counter<'mechanism' | 'status'>;
  private readonly receipts: Counter;
  private readonly deliveries: Counter<'outcome'>;
  private readonly mandates: Counter<'result'>;
  private readonly rateLimited: Counter<'route_class'>;
  private readonly notices: Counter<'channel'>;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    // The lag metrics' timer at the period of loop-delay.ts, not prom-client's 10 ms.
    collectDefaultMetrics({
      register: this.registry,
      prefix: 'conclave_',
      eventLoopMonitoringPrecision: LOOP_DELAY_RESOLUTION_MS,
    });
    // Gauges named like counters (promtool refuses the `_total` suffix on them); the per-type
    // gauges they sum stay (conclave_nodejs_active_handles and the others).
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
      this.registry.removeSingleMetric(`conclave_nodejs_${name}`);
    }
    this.requests = new Counter({
      name: 'conclave_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'conclave_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (long-polls include their wait).',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.batchTurns = new Histogram({
      name: 'conclave_room_batch_turns',
      help: 'Turns drained from one room mailbox and committed together.',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers,
    });
    this.commitSeconds = new Histogram({
      name: 'conclave_room_commit_duration_seconds',
      help: 'Time for a room batch to become durable in the store.',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.lockWaitSeconds = new Histogram({
      name: 'conclave_room_lock_wait_seconds',
      help: "Time to take a room's lock (Redis mode; a lock held by a dead process lapses after 1.5 s).",
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.lockTimeouts = new Counter({
      name: 'conclave_room_lock_timeouts_total',
      help: "Turns that gave up waiting for a room's lock (answered 503).",
      registers,
    });
    this.commitConflicts = new Counter({
      name: 'conclave_room_commit_conflicts_total',
      help: 'Commits refused by the version check or the lock fence, and run again on fresh state.',
      registers,
    });
    this.storeOutages = new Counter({
      name: 'conclave_store_unavailable_total',
      help: 'Requests answered 503 because the store did not answer.',
      registers,
    });
    this.toolCalls = new Counter({
      name: 'conclave_mcp_tool_calls_total',
      help: 'MCP tool calls answered (both protocol eras), by tool.',
      labelNames: ['tool'],
      registers,
    });
    this.toolErrors = new Counter({
      name: 'conclave_mcp_tool_errors_total',
      help: 'MCP tool calls answered with an error result, by tool and protocol error code.',
      labelNames: ['tool', 'code'],
      registers,
    });
    this.toolSeconds = new Histogram({
      name: 'conclave_mcp_tool_call_duration_seconds',
      help: 'Time to answer an MCP tool call (waits include their wait), by tool.',
      labelNames: ['tool'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rooms = new Counter({
      name: 'conclave_rooms_total',
      help: 'Rooms created, concluded and deleted (change).',
      labelNames: ['change'],
      registers,
    });
    this.decisionsOpened = new Counter({
      name: 'conclave_decisions_opened_total',
      help: 'Decisions opened, by voting mechanism.',
      labelNames: ['mechanism'],
      registers,
    });
    this.decisionsSealed = new Counter({
      name: 'conclave_decisions_sealed_total',
      help: 'Decisions sealed, by voting mechanism and receipt status.',
      labelNames: ['mechanism', 'status'],
      registers,
    });
    this.receipts = new Counter({
      name: 'conclave_receipts_signed_total',
      help: 'Receipts signed (decisions and room conclusions).',
      registers,
    });
    this.deliveries = new Counter({
      name: 'conclave_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered, verified (the receiver consented), retry (failed, tried again later), exhausted (failed for good), refused (a 3xx or 4xx answer), dropped (subscription or event gone).',
      labelNames: ['outcome'],
      registers,
    });
    this.mandates = new Counter({
      name: 'conclave_mandate_verifications_total',
      help: 'Mandates verified for a call, by result: ok or the error code.',
      labelNames: ['result'],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'conclave_rate_limited_total',
      help: 'Calls refused with rate_limit.exceeded, by route class (create, join, read, wait, write, mcp, oauth).',
      labelNames: ['route_class'],
      registers,
    });
    this.notices = new Counter({
      name: 'conclave_commit_notices_received_total',
      help: "Commit notices this process received over Redis, by channel: room (the sharded channels of the rooms it waits on) or broadcast (earlier versions' channel, listened to with COMMIT_NOTICES=both).",
      labelNames: ['channel'],
      registers,
    });
    new Gauge({
      name: 'conclave_commit_notice_rooms',
      help: 'Rooms whose commit notices this process is subscribed to (Redis mode): the rooms something here waits on, plus those lingering briefly after.',
      registers,
      collect() {
        this.set(sources.noticeRooms?.() ?? 0);
      },
    });
    new Gauge({
      name: 'conclave_webhook_origins_tripped',
      help: 'Receiving origins held back after repeated timeouts (endpoint health), in this process.',
      registers,
      collect() {
        this.set(sources.trippedOrigins());
      },
    });
    new Gauge({
      name: 'conclave_webhook_outbox_pending',
      help: 'Webhook deliveries waiting for an attempt.',
      registers,
      async collect() {
        try {
          this.set(await sources.pendingDeliveries());
        } catch {
          // The store is away: the gauge keeps its last figure; conclave_store_unavailable_total says why.
        }
      },
    });
    new Gauge({
      name: 'conclave_rooms_cached',
      help: 'Room actors held in this process.',
      registers,
      collect() {
        this.set(sources.cachedRooms());
      },
    });
    new Gauge({
      name: 'conclave_rooms_cached_bytes',
      help: 'Estimated resident bytes of the room actors held in this process (bounded by ROOM_CACHE_BYTES).',
      registers,
      collect() {
        this.set(sources.cachedBytes());
      },
    });
    new Gauge({
      name: 'conclave_waiters_parked',
      help: 'Long-polls parked in this process.',
      registers,
      collect() {
        this.set(sources.parkedWaiters());
      },
    });
    new Gauge({
      name: 'conclave_event_streams_open',
      help: 'SSE event streams open in this process.',
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    });
    new Gauge({
      name: 'conclave_tlog_integrator',
      help: "1 while this process holds the transparency log's lease and sequences receipts into it.",
      registers,
      collect() {
        this.set(sources.logIntegrator?.() ? 1 : 0);
      },
    });
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  batch(turns: number, commitSeconds: number | null): void {
    this.batchTurns.observe(turns);
    if (commitSeconds !== null) this.commitSeconds.observe(commitSeconds);
  }

  lock(waitSeconds: number, acquired: boolean): void {
    if (acquired) this.lockWaitSeconds.observe(waitSeconds);
    else this.lockTimeouts.inc();
  }

  /** A commit notice reached this process over Redis. */
  commitNotice(channel: 'room' | 'broadcast'): void {
    this.notices.inc({ channel });
  }

  commitConflict(): void {
    this.commitConflicts.inc();
  }

  storeUnavailable(): void {
    this.storeOutages.inc();
  }

  toolCall(tool: string, errorCode: string | null, seconds: number): void {
    this.toolCalls.inc({ tool });
    if (errorCode !== null) this.toolErrors.inc({ tool, code: errorCode });
    this.toolSeconds.observe({ tool }, seconds);
    if (errorCode === RATE_LIMITED) this.rateLimited.inc({ route_class: 'mcp' });
  }

  /** A REST answer that carried an error envelope; refusals of the rate limits are counted by route class. */
  refusal(routeClass: string, errorCode: string): void {
    if (errorCode === RATE_LIMITED) this.rateLimited.inc({ route_class: routeClass });
  }

  room(change: 'created' | 'concluded' | 'deleted'): void {
    this.rooms.inc({ change });
  }

  decisionOpened(mechanism: string): void {
    this.decisionsOpened.inc({ mechanism });
  }

  decisionSealed(mechanism: string, status: string): void {
    this.decisionsSealed.inc({ mechanism, status });
  }

  receiptsSigned(count: number): void {
    if (count > 0) this.receipts.inc(count);
  }

  delivery(outcome: AttemptOutcome): void {
    this.deliveries.inc({ outcome });
  }

  mandateVerification(result: string): void {
    this.mandates.inc({ result });
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
