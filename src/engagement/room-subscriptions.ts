/**
 * Which rooms' commit notices this process listens to (docs/architecture.md, Engagement: commit
 * notices). A room is wanted while anything in the process waits on it (a long-poll, an MCP wait, an
 * SSE stream: whatever listens on the CommitBus); it is subscribed once wanted, and unsubscribed
 * once it has been unwanted for `lingerMs` (a waiter that answers and parks again at once does not
 * churn the subscription). Subscribes and unsubscribes decided in one event-loop turn leave as one
 * command each (on a Cluster, one per room: a command takes channels of one slot, redis-fanout.ts).
 *
 * Why it cannot leave a room subscribed forever, nor a live waiter unsubscribed: each room has at
 * most one command in flight, and whenever one settles (and whenever the room's wish changes) the
 * room is reconciled again against what is wanted *now*. A room the server may still hold (a
 * subscribe that failed or timed out may still land) is forgotten only after an unsubscribe the
 * server confirmed.
 *
 * Why a commit is never missed: a subscription confirmed by the server receives every commit
 * published after it; a commit published before it is in the committed state. So once a subscribe is
 * confirmed, `onSubscribed` asks the room's listeners to read the committed state once more, which
 * covers a commit that landed between a waiter's own read and the subscription. A room that was
 * already subscribed when a waiter read its state needs nothing: its later commits all arrive.
 */

export interface NoticeChannels {
  /** Subscribes the rooms' notice channels; resolves once the server confirmed every one. */
  subscribe(slugs: string[]): Promise<void>;
  /** Unsubscribes them; resolves once the server confirmed. */
  unsubscribe(slugs: string[]): Promise<void>;
}

export interface SubscriptionTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: SubscriptionTimers = {
  set: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How long an unwanted room stays subscribed, in case a waiter parks again at once. */
export const NOTICE_LINGER_MS = 2000;
/** How long a failed (un)subscribe waits before it is tried again. */
export const NOTICE_RETRY_MS = 500;

interface Room {
  /** Something in the process listens to the room. */
  wanted: boolean;
  /** The server may hold a subscription for the room (set from the moment a subscribe is sent). */
  held: boolean;
  /** The server confirmed the subscription since the last reconnect. */
  confirmed: boolean;
  /** A command for the room is in flight. */
  busy: boolean;
  /** The linger timer of an unwanted room; `lingered` once it ran out. */
  linger: unknown;
  lingered: boolean;
  /** A command failed: the room waits for the retry timer. */
  backingOff: boolean;
}

export interface RoomSubscriptionOptions {
  lingerMs?: number;
  retryMs?: number;
  timers?: SubscriptionTimers;
  /** A subscribe was confirmed: the room's listeners read the committed state once more. */
  onSubscribed(slug: string): void;
  onError?(error: unknown): void;
}

export class RoomSubscriptions {
  private readonly rooms = new Map<string, Room>();
  /** Rooms to reconcile at the end of this turn. */
  private readonly dirty = new Set<string>();
  private flushQueued = false;
  private retryTimer: unknown = null;
  /** Bumped by resubscribeAll(): a subscribe sent before it is not taken as confirmed. */
  private generation = 0;
  private closed = false;
  private readonly lingerMs: number;
  private readonly retryMs: number;
  private readonly timers: SubscriptionTimers;

  constructor(
    /** Replaceable: tests hold a subscription back by wrapping it. */
    public channels: NoticeChannels,
    private readonly options: RoomSubscriptionOptions,
  ) {
    this.lingerMs = options.lingerMs ?? NOTICE_LINGER_MS;
    this.retryMs = options.retryMs ?? NOTICE_RETRY_MS;
    this.timers = options.timers ?? realTimers;
  }

  /** Something in the process starts listening to the room. */
  want(slug: string): void {
    let room = this.rooms.get(slug);
    if (!room) {
      room = {
        wanted: true,
        held: false,
        confirmed: false,
        busy: false,
        linger: null,
        lingered: false,
        backingOff: false,
      };
      this.rooms.set(slug, room);
    }
    room.wanted = true;
    room.lingered = false;
    if (room.linger !== null) this.timers.clear(room.linger);
    room.linger = null;
    this.mark(slug);
  }

  /** The last listener of the room left: unsubscribe after the linger, unless it is wanted again. */
  release(slug: string): void {
    const room = this.rooms.get(slug);
    if (!room?.wanted) return;
    room.wanted = false;
    room.lingered = false;
    room.linger = this.timers.set(() => {
      room.linger = null;
      room.lingered = true;
      this.mark(slug);
    }, this.lingerMs);
    this.mark(slug);
  }

  /**
   * The connection came back or the Cluster's shards moved: what the server holds is unknown, so
   * every wanted room is subscribed again and, once confirmed, re-checked.
   */
  resubscribeAll(): void {
    this.generation++;
    for (const [slug, room] of this.rooms) {
      room.confirmed = false;
      this.mark(slug);
    }
  }

  /** Rooms whose notices the server confirmed it sends here. */
  get subscribed(): number {
    let count = 0;
    for (const room of this.rooms.values()) if (room.confirmed) count++;
    return count;
  }

  /** Whether a room is subscribed and confirmed (tests). */
  isSubscribed(slug: string): boolean {
    return this.rooms.get(slug)?.confirmed === true;
  }

  /** Rooms the server may hold a subscription for (tests: none is left behind). */
  get held(): number {
    let count = 0;
    for (const room of this.rooms.values()) if (room.held) count++;
    return count;
  }

  close(): void {
    this.closed = true;
    for (const room of this.rooms.values()) if (room.linger !== null) this.timers.clear(room.linger);
    if (this.retryTimer !== null) this.timers.clear(this.retryTimer);
    this.rooms.clear();
  }

  private mark(slug: string): void {
    this.dirty.add(slug);
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  /** What each marked room needs, sent as one subscribe and one unsubscribe. */
  private flush(): void {
    this.flushQueued = false;
    if (this.closed) return;
    const subscribe: string[] = [];
    const unsubscribe: string[] = [];
    for (const slug of this.dirty) {
      const room = this.rooms.get(slug);
      if (!room || room.busy || room.backingOff) continue;
      if (room.wanted) {
        if (!room.confirmed) subscribe.push(slug);
      } else if (!room.held) {
        // Nothing to undo on the server: forget the room at once.
        if (room.linger !== null) this.timers.clear(room.linger);
        this.rooms.delete(slug);
      } else if (room.lingered) {
        unsubscribe.push(slug);
      }
    }
    this.dirty.clear();
    if (subscribe.length > 0) this.send('subscribe', subscribe);
    if (unsubscribe.length > 0) this.send('unsubscribe', unsubscribe);
  }

  private send(kind: 'subscribe' | 'unsubscribe', slugs: string[]): void {
    const generation = this.generation;
    const rooms = slugs.map((slug) => this.rooms.get(slug)!);
    for (const room of rooms) {
      room.busy = true;
      // From the moment a subscribe is sent the server may hold it, whatever its reply says.
      room.held = true;
    }
    const command = kind === 'subscribe' ? this.channels.subscribe(slugs) : this.channels.unsubscribe(slugs);
    command.then(
      () => {
        if (this.closed) return;
        slugs.forEach((slug, i) => {
          const room = rooms[i]!;
          room.busy = false;
          if (kind === 'subscribe') {
            room.confirmed = generation === this.generation;
            if (room.confirmed && room.wanted) this.options.onSubscribed(slug);
          } else {
            room.held = false;
            room.confirmed = false;
          }
          this.mark(slug);
        });
      },
      (error: unknown) => {
        if (this.closed) return;
        this.options.onError?.(error);
        for (const room of rooms) {
          room.busy = false;
          room.confirmed = false;
          room.backingOff = true;
        }
        this.retryLater();
      },
    );
  }

  private retryLater(): void {
    if (this.retryTimer !== null) return;
    this.retryTimer = this.timers.set(() => {
      this.retryTimer = null;
      for (const [slug, room] of this.rooms) {
        if (!room.backingOff) continue;
        room.backingOff = false;
        this.mark(slug);
      }
    }, this.retryMs);
  }
}
