/** The SSE stream's heartbeat and lifetime, on fake timers (06 §6). */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CommitBus } from '../../../src/engagement/commit-bus.js';
import { EventStream, HEARTBEAT_MS, MAX_STREAM_MS } from '../../../src/engagement/event-stream.js';
import { RoomFeeds } from '../../../src/engagement/room-feed.js';
import type { RoomState } from '../../../src/domain/state.js';
import type { RoomStore } from '../../../src/store/port.js';

class FakeResponse extends EventEmitter {
  written: string[] = [];
  writableEnded = false;
  writableLength = 0;
  destroyed = false;
  write(chunk: string | Buffer): boolean {
    this.written.push(chunk.toString());
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
}

describe('event stream timers', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends a keep-alive comment every 15 s and closes after 30 minutes', async () => {
    const response = new FakeResponse();
    const bus = new CommitBus();
    let closed = false;
    const stream = new EventStream(
      {
        store: { events: async () => [] } as unknown as RoomStore,
        states: { read: async () => ({}) as RoomState },
        feeds: new RoomFeeds({
          store: { events: async () => [] } as unknown as RoomStore,
          states: { read: async () => ({}) as RoomState },
          bus,
          onError: () => {},
        }),
        onError: () => {},
      },
      'room',
      0,
      response as unknown as ServerResponse,
      () => {
        closed = true;
      },
    );
    stream.start();
    expect(bus.has('room')).toBe(true);
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS - 1);
    expect(response.written).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(response.written).toEqual([': keep-alive\n\n']);
    await vi.advanceTimersByTimeAsync(MAX_STREAM_MS);
    expect(closed).toBe(true);
    expect(response.writableEnded).toBe(true);
    expect(bus.has('room')).toBe(false);
  });

  it('lets go of everything when the client disconnects', async () => {
    const response = new FakeResponse();
    const bus = new CommitBus();
    let closed = false;
    new EventStream(
      {
        store: { events: async () => [] } as unknown as RoomStore,
        states: { read: async () => ({}) as RoomState },
        feeds: new RoomFeeds({
          store: { events: async () => [] } as unknown as RoomStore,
          states: { read: async () => ({}) as RoomState },
          bus,
          onError: () => {},
        }),
        onError: () => {},
      },
      'room',
      0,
      response as unknown as ServerResponse,
      () => {
        closed = true;
      },
    ).start();
    response.emit('close');
    expect(closed).toBe(true);
    expect(bus.has('room')).toBe(false);
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS * 2);
    expect(response.written).toEqual([]);
  });
});
