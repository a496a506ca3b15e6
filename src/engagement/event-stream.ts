/**
 * One server-sent event stream (docs/agents.md, The REST loop). Every frame comes from the stored log, read after the last
 * seq the stream sent. The stream backfills on its own, paced by its socket; once it has sent the log
 * to its end it joins its room's feed (room-feed.ts), which reads each commit's events once and writes
 * the same serialized frames to every stream of the room. The feed listens from the moment the stream
 * starts and re-reads when the stream joins, so there is no gap and no duplicate between the two
 * parts. Frames are redacted against the state read for the batch that carries them.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { RoomState } from '../domain/state.js';
import type { RoomStore } from '../store/port.js';
import type { CredentialWatch, SessionEnd } from './credential-watch.js';
import { type FeedMember, PAGE, type RoomFeeds, STREAM_BUFFER_LIMIT_BYTES } from './room-feed.js';
import type { StateSource } from './waiters.js';

export const HEARTBEAT_MS = 15_000;
/** Streams are closed after this long; clients reconnect with Last-Event-ID. */
export const MAX_STREAM_MS = 30 * 60_000;

export interface EventStreamDeps {
  store: RoomStore;
  states: StateSource;
  feeds: RoomFeeds;
  onError(error: unknown, slug: string): void;
}

export class EventStream implements FeedMember {
  lastSeq: number;
  private closed = false;
  private readonly cleanups: (() => void)[] = [];

  constructor(
    private readonly deps: EventStreamDeps,
    readonly slug: string,
    afterSeq: number,
    private readonly response: ServerResponse,
    private readonly onClose: () => void,
    /** The credential the stream was opened with, re-checked against every state it reads. */
    private readonly watch: CredentialWatch | null = null,
  ) {
    this.lastSeq = afterSeq;
  }

  /** Enters the room's feed first, then backfills, so a commit made during the backfill is read when it joins. */
  start(): void {
    this.deps.feeds.enter(this);
    this.cleanups.push(() => this.deps.feeds.leave(this));
    const heartbeat = setInterval(() => this.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const lifetime = setTimeout(() => this.close(), MAX_STREAM_MS);
    heartbeat.unref();
    lifetime.unref();
    this.cleanups.push(
      () => clearInterval(heartbeat),
      () => clearTimeout(lifetime),
    );
    const onGone = () => this.close();
    this.response.on('close', onGone);
    this.cleanups.push(() => this.response.off('close', onGone));
    if (this.watch) this.cleanups.push(this.watch.arm((end) => this.end(end)));
    void this.backfill();
  }

  get watched(): boolean {
    return this.watch !== null;
  }

  check(state: RoomState): SessionEnd | null {
    return this.watch?.check(state) ?? null;
  }

  /**
   * The feed's frames, serialized once for every stream of the room. A reader that stopped reading
   * is cut off once its queue passes the bound; its client reconnects with Last-Event-ID.
   */
  send(frames: Buffer, seq: number): void {
    if (this.closed) return;
    this.lastSeq = seq;
    this.write(frames);
    if (this.response.writableLength > STREAM_BUFFER_LIMIT_BYTES) {
      this.closed = true;
      for (const cleanup of this.cleanups.splice(0)) cleanup();
      this.response.destroy();
      this.onClose();
    }
  }

  /** Ends the stream; with `retryMs`, first tells the client when to reconnect (a draining process). */
  close(retryMs?: number): void {
    if (this.closed) return;
    this.closed = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    if (!this.response.writableEnded) {
      if (retryMs !== undefined) this.response.write(`retry: ${retryMs}\n\n`);
      this.response.end();
    }
    this.onClose();
  }

  /**
   * Ends the stream because of its credential. The stream's status line is long sent, so the reason
   * goes in a last comment (ignored by EventSource clients); a reconnect with Last-Event-ID gets the
   * 401 envelope when the credential no longer works.
   */
  end(end: SessionEnd): void {
    if (this.closed) return;
    const message = end.error ? `${end.error.code}: ${end.error.message}` : end.reason;
    this.write(`: stream ended, ${message.replace(/[\r\n]+/g, ' ')}\n\n`);
    this.close();
  }

  /** Whether the credential still holds in this state; ends the stream when it does not. */
  private stillAllowed(state: RoomState): boolean {
    const end = this.watch?.check(state);
    if (!end) return true;
    this.end(end);
    return false;
  }

  /** The stream's own part: the log after its cursor, paced by its socket; then the room's feed. */
  private async backfill(): Promise<void> {
    try {
      await this.drain();
      if (!this.closed) this.deps.feeds.join(this);
    } catch (error) {
      this.deps.onError(error, this.slug);
      this.close();
    }
  }

  /**
   * Sends every stored event after the last one sent, a page at a time; the pages are shared with
   * the room's other streams (room-feed.ts). The credential is checked against each page's state
   * before anything of it is sent, also when there is nothing to backfill.
   */
  private async drain(): Promise<void> {
    while (!this.closed) {
      const page = await this.deps.feeds.page(this.slug, this.lastSeq);
      if (!page.state) {
        this.close();
        return;
      }
      // The events of a seat recovery are not for the session it evicts.
      if (!this.stillAllowed(page.state)) return;
      for (const [index, event] of page.events.entries()) {
        if (this.closed) return;
        this.lastSeq = event.seq;
        if (!this.write(page.frames[index]!)) {
          await Promise.race([once(this.response, 'drain'), once(this.response, 'close')]);
        }
        if (event.event_type === 'room.concluded') {
          this.close();
          return;
        }
      }
      if (page.events.length < PAGE) return;
    }
  }

  /** False when the socket buffer is full and the caller should wait for 'drain'. */
  private write(chunk: string | Buffer): boolean {
    if (this.closed || this.response.writableEnded || this.response.destroyed) return true;
    return this.response.write(chunk);
  }
}

/** The streams open in this process, so shutdown can end them. */
export class EventStreams {
  private readonly open = new Set<EventStream>();

  add(stream: EventStream): void {
    this.open.add(stream);
  }

  remove(stream: EventStream): void {
    this.open.delete(stream);
  }

  /** Ends every stream, asking clients to reconnect after `retryMs` (to another process). */
  closeAll(retryMs?: number): void {
    for (const stream of [...this.open]) stream.close(retryMs);
  }

  get size(): number {
    return this.open.size;
  }
}
