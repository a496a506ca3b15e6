/**
 * The live part of every SSE stream of one room, fanned out once (docs/architecture.md, SSE fan-out).
 * A stream backfills on its own (event-stream.ts); once it has read the log to its end it joins its
 * room's feed. On a commit notice the feed reads the new events once, checks every member's
 * credential against the state read once, serializes each event's frame once and writes the same
 * bytes to every member. A member whose socket buffer grows past STREAM_BUFFER_LIMIT_BYTES (a
 * reader that stopped reading) is cut off: the others are never paced by it, and its client
 * reconnects with Last-Event-ID and backfills.
 *
 * The feed also serves its streams' backfill pages: streams of the room that open together (a
 * reconnect storm: every client of a restarted process at once) from the same cursor share one read
 * of the page, one state read and one serialization of its frames; each stream still checks its own
 * credential against the page's state. A commit notice drops the pages read before it.
 */
import { redactEvent } from '../domain/views/events.js';
import type { RoomState } from '../domain/state.js';
import type { RoomStore, StoredEvent } from '../store/port.js';
import type { CommitBus } from './commit-bus.js';
import type { SessionEnd } from './credential-watch.js';
import type { StateSource } from './waiters.js';

/** Bytes a member may have queued in user space (beyond what the kernel took) before it is cut off. */
export const STREAM_BUFFER_LIMIT_BYTES = 64 * 1024;
/** Events per read of the log, by the feed and by a backfill. */
export const PAGE = 200;
/** Backfill pages a feed keeps between commits, by cursor; past it the oldest is dropped. */
const PAGES_KEPT = 16;

/** A page of the log after a cursor, with the state it was redacted against (null: the room is gone). */
export interface BackfillPage {
  events: StoredEvent[];
  state: RoomState | null;
  /** Each event's frame, serialized once for every stream that reads the page. */
  frames: string[];
}

/** What the feed needs of a stream. */
export interface FeedMember {
  readonly slug: string;
  /** The seq of the last event this member was sent. */
  readonly lastSeq: number;
  /** How the member's credential ends in this state, or null to go on; null when it has none to check. */
  check(state: RoomState): SessionEnd | null;
  readonly watched: boolean;
  /** Writes frames already serialized, up to `seq`; the member cuts itself off when its buffer is over the limit. */
  send(frames: Buffer, seq: number): void;
  end(why: SessionEnd): void;
  close(): void;
}

export interface RoomFeedDeps {
  store: RoomStore;
  states: StateSource;
  bus: CommitBus;
  onError(error: unknown, slug: string): void;
}

/** One SSE frame per event, serialized once whatever the number of streams. */
export function eventFrame(state: RoomState, event: Parameters<typeof redactEvent>[1]): string {
  const view = redactEvent(state, event);
  return `id: ${view.id}\nevent: ${view.event_type}\ndata: ${JSON.stringify(view)}\n\n`;
}

class RoomFeed {
  /** Streams still backfilling: they keep the feed listening, and are sent nothing by it. */
  readonly backfilling = new Set<FeedMember>();
  readonly members = new Set<FeedMember>();
  private pumping = false;
  private again = false;
  /** A commit notice came since the last round: the round re-checks every member's credential. */
  private noticed = false;
  private readonly pages = new Map<number, Promise<BackfillPage>>();
  private readonly stopListening: () => void;

  constructor(
    private readonly deps: RoomFeedDeps,
    readonly slug: string,
  ) {
    this.stopListening = deps.bus.listen(slug, () => {
      this.pages.clear();
      this.noticed = true;
      void this.pump();
    });
  }

  /** The page after `after`, read once for every stream that asks for it before the next commit. */
  page(after: number): Promise<BackfillPage> {
    const kept = this.pages.get(after);
    if (kept) return kept;
    const read = this.readPage(after);
    if (this.pages.size >= PAGES_KEPT) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(after, read);
    read.catch(() => {
      if (this.pages.get(after) === read) this.pages.delete(after);
    });
    return read;
  }

  private async readPage(after: number): Promise<BackfillPage> {
    const events = await this.deps.store.events(this.slug, after, PAGE);
    // Read after the events, so the state is at least as new as every event it redacts.
    const state = await this.deps.states.read(this.slug);
    return { events, state, frames: state ? events.map((event) => eventFrame(state, event)) : [] };
  }

  get empty(): boolean {
    return this.members.size === 0 && this.backfilling.size === 0;
  }

  dispose(): void {
    this.stopListening();
  }

  /** Reads after the members' position until the log's end; a notice during a read reads once more. */
  async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        if (this.members.size > 0) await this.round();
      } while (this.again && this.members.size > 0);
    } catch (error) {
      this.deps.onError(error, this.slug);
      for (const member of [...this.members]) member.close();
    } finally {
      this.pumping = false;
    }
  }

  private async round(): Promise<void> {
    // Credentials change only by commits: a round run for members that joined (each checked its own
    // when it backfilled) re-checks no one, so ten thousand joins cost no ten thousand passes over all.
    const recheck = this.noticed;
    this.noticed = false;
    for (;;) {
      let from = Number.POSITIVE_INFINITY;
      let watched = false;
      for (const member of this.members) {
        if (member.lastSeq < from) from = member.lastSeq;
        watched ||= recheck && member.watched;
      }
      if (from === Number.POSITIVE_INFINITY) return;
      const events = await this.deps.store.events(this.slug, from, PAGE);
      // Every commit notice re-checks the credentials, also those that add no event.
      if (events.length === 0 && !watched) return;
      const state = await this.deps.states.read(this.slug);
      // One snapshot for the round: a member that joins after it is served by the next round.
      const members = [...this.members];
      if (!state) {
        for (const member of members) member.close();
        return;
      }
      if (watched) {
        for (const member of members) {
          if (!member.watched) continue;
          const end = member.check(state);
          // The events of a seat recovery are not for the session it evicts.
          if (end) member.end(end);
        }
      }
      if (events.length === 0) return;
      const frames = events.map((event) => Buffer.from(eventFrame(state, event)));
      const all = frames.length === 1 ? frames[0]! : Buffer.concat(frames);
      const first = events[0]!.seq;
      const last = events.at(-1)!.seq;
      for (const member of members) {
        if (member.lastSeq < first) member.send(all, last);
        else if (member.lastSeq < last) {
          // One that joined between the read and now: only what it has not been sent.
          const start = events.findIndex((event) => event.seq > member.lastSeq);
          member.send(Buffer.concat(frames.slice(start)), last);
        }
      }
      if (events.some((event) => event.event_type === 'room.concluded')) {
        for (const member of [...this.members]) member.close();
        return;
      }
      if (events.length < PAGE) return;
    }
  }
}

/** Every room's feed in this process. */
export class RoomFeeds {
  private readonly feeds = new Map<string, RoomFeed>();

  constructor(private readonly deps: RoomFeedDeps) {}

  /** A page of the room's log for a backfilling stream, shared with the others (see the module comment). */
  page(slug: string, after: number): Promise<BackfillPage> {
    return this.feedOf(slug).page(after);
  }

  /** A stream starts backfilling: its room's feed listens from now on, so no notice falls between. */
  enter(member: FeedMember): void {
    this.feedOf(member.slug).backfilling.add(member);
  }

  /** The stream has sent the log to its end: from now on the feed sends it the rest. */
  join(member: FeedMember): void {
    const feed = this.feedOf(member.slug);
    feed.backfilling.delete(member);
    feed.members.add(member);
    // Anything committed between the stream's last read and now is read again by the feed.
    void feed.pump();
  }

  leave(member: FeedMember): void {
    const feed = this.feeds.get(member.slug);
    if (!feed) return;
    feed.backfilling.delete(member);
    feed.members.delete(member);
    if (feed.empty) {
      feed.dispose();
      this.feeds.delete(member.slug);
    }
  }

  private feedOf(slug: string): RoomFeed {
    let feed = this.feeds.get(slug);
    if (!feed) {
      feed = new RoomFeed(this.deps, slug);
      this.feeds.set(slug, feed);
    }
    return feed;
  }
}
