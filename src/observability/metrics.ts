/**
 * The service's Prometheus metrics (`GET /metrics`, text format 0.0.4), on a registry of its own so
 * several services in one process (tests) keep separate figures. What moves with load: requests
 * per route and status with their latency, room batches (turns per batch, commit latency), room
 * locks (wait, timeouts) and commit conflicts, store outages answered, and gauges read at scrape
 * time (cached rooms, parked long-polls, open event streams, webhook outbox depth), beside the
 * process's own figures (CPU, memory, event-loop lag).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricSources {
  cachedRooms(): number;
  /** Their weight together (RoomRegistry.cachedBytes), held under ROOM_CACHE_BYTES. */
  cachedBytes(): number;
  parkedWaiters(): number;
  openStreams(): number;
  /** Pending webhook deliveries (the whole deployment's outbox); may fail while the store is away. */
  pendingDeliveries(): Promise<number>;
  /** Whether this process holds the transparency log's lease (it sequences receipts). */
  logIntegrator?(): boolean;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly batchTurns: Histogram;
  private readonly commitSeconds: Histogram;
  private readonly lockWaitSeconds: Histogram;
  private readonly lockTimeouts: Counter;
  private readonly commitConflicts: Counter;
  private readonly storeOutages: Counter;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'conclave_' });
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

  commitConflict(): void {
    this.commitConflicts.inc();
  }

  storeUnavailable(): void {
    this.storeOutages.inc();
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
