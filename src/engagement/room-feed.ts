/**
 * The live part of every SSE stream of one room, fanned out once (docs/architecture.md, SSE fan-out).
 * A stream backfills on its own (event-stream.ts); once it has read the log to its end it joins its
 * room's feed. On a commit notice the feed reads the new events once, checks every member's
 * credential against the state read once, serializes each event's frame once and writes the same
 * bytes to every member. A member whose socket buffer grows past STREAM_BUFFER_LIMIT_BYTES (a
 * reader that stopped reading) is cut off: the others are never paced by it, and its client
 * reconnects with Last-Event-ID and backfills.
 */
import { redactEvent } from '../domain/views/events.js';
import type { RoomState } from '../domain/state.js';
import type { RoomStore } from '../store/port.js';
import type { CommitBus } from './commit-bus.js';
import type { SessionEnd } from './credential-watch.js';
import type { StateSource } from './waiters.js';

/** Bytes a member may have queued in user space (beyond what the kernel took) before it is cut off. */
export const STREAM_BUFFER_LIMIT_BYTES = 64 * 1024;
const PAGE = 200;

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
  private readonly stopListening: () => void;

  constructor(
    private readonly deps: RoomFeedDeps,
    readonly slug: string,
  ) {
    this.stopListening = deps.bus.listen(slug, () => void this.pump());
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
    for (;;) {
      let from = Number.POSITIVE_INFINITY;
      let watched = false;
      for (const member of this.members) {
        if (member.lastSeq < from) from = member.lastSeq;
        watched ||= member.watched;
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
