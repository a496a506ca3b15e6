/**
 * One server-sent event stream (docs/agents.md, The REST loop). Every frame comes from the stored log, read after the last
 * seq the stream sent: the backfill and the live part are the same loop, so there is no gap and no
 * duplicate between them. A commit notice only says "read again"; a pump that is already running
 * just runs once more. Frames are redacted against the state read for the batch that carries them.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { redactEvent } from '../domain/views/events.js';
import type { RoomState } from '../domain/state.js';
import type { RoomStore } from '../store/port.js';
import type { CommitBus } from './commit-bus.js';
import type { CredentialWatch, SessionEnd } from './credential-watch.js';
import type { StateSource } from './waiters.js';

export const HEARTBEAT_MS = 15_000;
/** Streams are closed after this long; clients reconnect with Last-Event-ID. */
export const MAX_STREAM_MS = 30 * 60_000;
const PAGE = 200;

export interface EventStreamDeps {
  store: RoomStore;
  states: StateSource;
  bus: CommitBus;
  onError(error: unknown, slug: string): void;
}

export class EventStream {
  private lastSeq: number;
  private pumping = false;
  private again = false;
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

  /** Subscribes first, then backfills, so a commit made during the backfill is read by the next pump. */
  start(): void {
    this.cleanups.push(this.deps.bus.listen(this.slug, () => void this.pump()));
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
    void this.pump();
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
  private end(end: SessionEnd): void {
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

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        // Every commit notice re-checks the credential, also those that add no event.
        if (this.watch) {
          const state = await this.deps.states.read(this.slug);
          if (!state) return this.close();
          if (!this.stillAllowed(state)) return;
        }
        await this.drain();
      } while (this.again && !this.closed);
    } catch (error) {
      this.deps.onError(error, this.slug);
      this.close();
    } finally {
      this.pumping = false;
    }
  }

  /** Sends every stored event after the last one sent. */
  private async drain(): Promise<void> {
    while (!this.closed) {
      const events = await this.deps.store.events(this.slug, this.lastSeq, PAGE);
      if (events.length === 0) return;
      const state = await this.deps.states.read(this.slug);
      if (!state) {
        this.close();
        return;
      }
      // The events of a seat recovery are not for the session it evicts.
      if (!this.stillAllowed(state)) return;
      for (const event of events) {
        if (this.closed) return;
        const view = redactEvent(state, event);
        const frame = `id: ${view.id}\nevent: ${view.event_type}\ndata: ${JSON.stringify(view)}\n\n`;
        this.lastSeq = event.seq;
        if (!this.write(frame)) await Promise.race([once(this.response, 'drain'), once(this.response, 'close')]);
        if (event.event_type === 'room.concluded') {
          this.close();
          return;
        }
      }
    }
  }

  /** False when the socket buffer is full and the caller should wait for 'drain'. */
  private write(chunk: string): boolean {
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
