/**
 * Fires room deadlines (window ends, proposal ends, settle ends) with nobody touching the room, so
 * waiters, streams and webhooks learn of a seal on time. It is only an optimisation: lazy resolution
 * on the next touch produces the identical result, so after a restart nothing is lost.
 */
import type { RoomStore } from '../store/port.js';
import type { Clock } from './clock.js';

/** Longest single sleep; the scheduler re-reads the store at least this often. */
const MAX_SLEEP_MS = 30_000;
const BATCH = 100;
const RETRY_MS = 1000;
/** A room whose deadline keeps failing is retried after 1 s, 2 s, 4 s … at most this long. */
const MAX_BACKOFF_MS = 60_000;
/** Failing rooms remembered at most; beyond it the oldest is forgotten (and simply retried sooner). */
const MAX_FAILING = 10_000;

interface Failure {
  failures: number;
  retryAt: number;
}

export class DeadlineScheduler {
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  private running = false;
  private stopped = false;
  /** Rooms whose last tick failed: contained here, logged once, retried with a growing backoff. */
  private readonly failing = new Map<string, Failure>();
  /** The store could not be read on the last attempt: reported once per outage, not once a second. */
  private storeDown = false;

  constructor(
    private readonly store: RoomStore,
    private readonly clock: Clock,
    private readonly tick: (slug: string) => Promise<void>,
    private readonly onError: (error: unknown, slug: string | null) => void,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.rearm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }

  /** A commit reported a room's next deadline; wake earlier if it is sooner than the armed one. */
  note(deadline: number | null): void {
    if (this.stopped || deadline === null) return;
    if (this.armedFor === null || deadline < this.armedFor) this.arm(deadline);
  }

  /** How many rooms are backing off after a failed deadline (for health and metrics). */
  get failingRooms(): number {
    return this.failing.size;
  }

  /**
   * Runs every due room now (tests call this after moving a manual clock). Never rejects: a store
   * outage or one room's failure is reported through onError and retried later.
   */
  async runDue(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const visited = new Set<string>();
    try {
      for (;;) {
        const now = this.clock.now();
        const due = (await this.store.dueRooms(now, BATCH)).filter((slug) => !visited.has(slug));
        this.storeDown = false;
        if (due.length === 0) break;
        for (const slug of due) {
          visited.add(slug);
          if ((this.failing.get(slug)?.retryAt ?? 0) > now) continue;
          await this.tickContained(slug);
        }
      }
    } catch (error) {
      this.reportStoreFailure(error);
    } finally {
      this.running = false;
    }
  }

  private async tickContained(slug: string): Promise<void> {
    try {
      await this.tick(slug);
      this.failing.delete(slug);
    } catch (error) {
      const failures = (this.failing.get(slug)?.failures ?? 0) + 1;
      if (failures === 1) this.onError(error, slug);
      this.failing.delete(slug);
      this.failing.set(slug, {
        failures,
        retryAt: this.clock.now() + Math.min(RETRY_MS * 2 ** (failures - 1), MAX_BACKOFF_MS),
      });
      if (this.failing.size > MAX_FAILING) this.failing.delete(this.failing.keys().next().value!);
    }
  }

  private async rearm(): Promise<void> {
    if (this.stopped) return;
    try {
      const next = await this.store.nextDeadline();
      this.storeDown = false;
      // A room still due after a run failed to advance; back off instead of spinning on it.
      const now = this.clock.now();
      this.arm(next === null ? now + MAX_SLEEP_MS : Math.max(next, now + (next <= now ? RETRY_MS : 0)));
    } catch (error) {
      this.reportStoreFailure(error);
      this.arm(this.clock.now() + RETRY_MS);
    }
  }

  private reportStoreFailure(error: unknown): void {
    if (!this.storeDown) this.onError(error, null);
    this.storeDown = true;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.min(Math.max(at - this.clock.now(), 0), MAX_SLEEP_MS);
    this.armedFor = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      void this.runDue().then(() => this.rearm());
    }, delay);
    this.timer.unref();
  }
}
