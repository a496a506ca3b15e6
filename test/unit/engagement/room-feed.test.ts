/**
 * The SSE fan-out of one room (docs/architecture.md, SSE fan-out): each commit's frames serialized
 * once and written as the same bytes to every stream, and a reader that stopped reading cut off once
 * its queue passes the bound, without holding the others back.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { RoomState } from '../../../src/domain/state.js';
import { CommitBus } from '../../../src/engagement/commit-bus.js';
import { EventStream } from '../../../src/engagement/event-stream.js';
import { RoomFeeds, STREAM_BUFFER_LIMIT_BYTES } from '../../../src/engagement/room-feed.js';
import type { RoomStore, StoredEvent } from '../../../src/store/port.js';

/** A socket that takes everything (`stalled: false`) or keeps all of it queued, as a reader that stopped reading. */
class FakeResponse extends EventEmitter {
  chunks: (string | Buffer)[] = [];
  writableEnded = false;
  writableLength = 0;
  destroyed = false;
  constructor(private readonly stalled: boolean) {
    super();
  }
  write(chunk: string | Buffer): boolean {
    this.chunks.push(chunk);
    if (this.stalled) this.writableLength += Buffer.byteLength(chunk);
    return !this.stalled;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  text(): string {
    return this.chunks.map(String).join('');
  }
}

const BODY = 'x'.repeat(2000);

function event(seq: number): StoredEvent {
  return {
    id: `evt_${seq}`,
    seq,
    event_type: 'deliberation.message',
    occurred_at: '2026-05-01T10:00:00.000Z',
    decision_id: null,
    data: { body: BODY },
  } as unknown as StoredEvent;
}

function harness() {
  const log: StoredEvent[] = [];
  let reads = 0;
  const store = {
    events: async (_slug: string, after: number, limit: number) => {
      reads++;
      return log.filter((e) => e.seq > after).slice(0, limit);
    },
  } as unknown as RoomStore;
  const states = { read: async () => ({}) as RoomState };
  const bus = new CommitBus();
  const feeds = new RoomFeeds({ store, states, bus, onError: (error) => expect.fail(String(error)) });
  const open = (stalled: boolean) => {
    const response = new FakeResponse(stalled);
    const state = { closed: false };
    new EventStream(
      { store, states, feeds, onError: (error) => expect.fail(String(error)) },
      'room',
      0,
      response as unknown as ServerResponse,
      () => {
        state.closed = true;
      },
    ).start();
    return { response, state };
  };
  const commit = async (count: number) => {
    for (let i = 0; i < count; i++) log.push(event(log.length + 1));
    bus.notify('room');
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { open, commit, bus, reads: () => reads };
}

describe('room feed', () => {
  it('reads each commit once and writes the same serialized bytes to every stream', async () => {
    const { open, commit, reads } = harness();
    const streams = Array.from({ length: 50 }, () => open(false));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const before = reads();
    await commit(1);
    // One read for the feed, not one per stream.
    expect(reads() - before).toBe(1);
    const written = streams.map((s) => s.response.chunks.at(-1));
    expect(Buffer.isBuffer(written[0])).toBe(true);
    for (const chunk of written) expect(chunk).toBe(written[0]);
    expect(String(written[0])).toContain('id: evt_1\nevent: deliberation.message\n');
  });

  it('cuts off a reader that stopped reading once its queue passes the bound; the others get every frame', async () => {
    const { open, commit } = harness();
    const healthy = [open(false), open(false)];
    const stalled = open(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const frameBytes = 2200;
    const commits = Math.ceil((STREAM_BUFFER_LIMIT_BYTES * 2) / frameBytes);
    let cutAt: number | null = null;
    for (let i = 1; i <= commits; i++) {
      await commit(1);
      if (stalled.state.closed && cutAt === null) cutAt = i;
    }
    expect(stalled.response.destroyed).toBe(true);
    expect(stalled.state.closed).toBe(true);
    // Cut off soon after the bound, with no more than the bound (and one frame) ever queued.
    expect(cutAt).not.toBeNull();
    expect(stalled.response.writableLength).toBeLessThanOrEqual(STREAM_BUFFER_LIMIT_BYTES + frameBytes);
    const queuedBeforeCut = stalled.response.chunks.length;
    await commit(3);
    expect(stalled.response.chunks.length).toBe(queuedBeforeCut);
    for (const { response, state } of healthy) {
      expect(state.closed).toBe(false);
      const ids = [...response.text().matchAll(/^id: evt_(\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids).toEqual(Array.from({ length: commits + 3 }, (_, i) => i + 1));
    }
  });

  it('sends a stream that joins mid-log exactly the events after its backfill, once', async () => {
    const { open, commit } = harness();
    const early = open(false);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await commit(5);
    const late = open(false);
    await commit(2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const ids = (r: FakeResponse) => [...r.text().matchAll(/^id: evt_(\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids(early.response)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(ids(late.response)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('streams that open together from one cursor share one read of their backfill (a reconnect storm)', async () => {
    const { open, commit, reads } = harness();
    await commit(3);
    const before = reads();
    const streams = Array.from({ length: 50 }, () => open(false));
    await new Promise((resolve) => setTimeout(resolve, 0));
    // One read of the page for all fifty, and the feed's catch-up as they join: not one read (or two) per stream.
    expect(reads() - before).toBeLessThanOrEqual(3);
    const ids = (r: FakeResponse) => [...r.text().matchAll(/^id: evt_(\d+)$/gm)].map((m) => Number(m[1]));
    for (const { response } of streams) expect(ids(response)).toEqual([1, 2, 3]);
    await commit(1);
    for (const { response } of streams) expect(ids(response)).toEqual([1, 2, 3, 4]);
  });

  it('stops listening to the room when its last stream leaves', async () => {
    const { open, bus } = harness();
    const a = open(false);
    const b = open(false);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(bus.has('room')).toBe(true);
    a.response.emit('close');
    expect(bus.has('room')).toBe(true);
    b.response.emit('close');
    expect(bus.has('room')).toBe(false);
  });
});
