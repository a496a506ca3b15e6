/**
 * Which rooms a process subscribes to (src/engagement/room-subscriptions.ts), against a fake server
 * whose replies the test releases one by one and a manual timer: linger, coalescing, the races of a
 * fast subscribe/unsubscribe, failures, reconnects, and the re-check after each confirmation.
 */
import { describe, expect, it } from 'vitest';
import { CommitBus } from '../../../src/engagement/commit-bus.js';
import { type NoticeChannels, RoomSubscriptions } from '../../../src/engagement/room-subscriptions.js';

interface Sent {
  kind: 'subscribe' | 'unsubscribe';
  slugs: string[];
  settle(): Promise<void>;
  fail(): Promise<void>;
}

/** A server that holds every command until the test settles it, and remembers what it holds. */
function fakeServer() {
  const sent: Sent[] = [];
  const held = new Set<string>();
  const channels: NoticeChannels = {
    subscribe: (slugs) => command('subscribe', slugs),
    unsubscribe: (slugs) => command('unsubscribe', slugs),
  };
  function command(kind: Sent['kind'], slugs: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      sent.push({
        kind,
        slugs,
        async settle() {
          for (const slug of slugs) {
            if (kind === 'subscribe') held.add(slug);
            else held.delete(slug);
          }
          resolve();
          await flush();
        },
        async fail() {
          reject(new Error('connection lost'));
          await flush();
        },
      });
    });
  }
  return { sent, held, channels };
}

/** Timers the test runs by hand. */
function manualTimers() {
  let now = 0;
  const pending = new Map<number, { at: number; run: () => void }>();
  let next = 1;
  return {
    timers: {
      set(run: () => void, ms: number) {
        const id = next++;
        pending.set(id, { at: now + ms, run });
        return id;
      },
      clear(id: unknown) {
        pending.delete(id as number);
      },
    },
    async advance(ms: number) {
      now += ms;
      for (const [id, timer] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > now) continue;
        pending.delete(id);
        timer.run();
      }
      await flush();
    },
  };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup() {
  const server = fakeServer();
  const clock = manualTimers();
  const rechecks: string[] = [];
  const rooms = new RoomSubscriptions(server.channels, {
    lingerMs: 1000,
    retryMs: 100,
    timers: clock.timers,
    onSubscribed: (slug) => rechecks.push(slug),
  });
  const bus = new CommitBus();
  bus.watchRooms(rooms);
  return { server, clock, rechecks, rooms, bus };
}

describe('room subscriptions', () => {
  it('subscribes a room at its first listener, coalescing the rooms of one turn into one command', async () => {
    const { server, bus, rooms, rechecks } = setup();
    bus.listen('a', () => {});
    bus.listen('a', () => {});
    bus.listen('b', () => {});
    await flush();
    expect(server.sent.map((s) => [s.kind, s.slugs])).toEqual([['subscribe', ['a', 'b']]]);
    expect(rooms.isSubscribed('a')).toBe(false);
    await server.sent[0]!.settle();
    expect(rooms.subscribed).toBe(2);
    // Confirmed: each room's listeners read the committed state once more.
    expect(rechecks).toEqual(['a', 'b']);
  });

  it('unsubscribes once the last listener has been gone for the linger, not before', async () => {
    const { server, bus, clock, rooms } = setup();
    const stop = bus.listen('a', () => {});
    await flush();
    await server.sent[0]!.settle();
    stop();
    await clock.advance(999);
    expect(server.sent).toHaveLength(1);
    await clock.advance(1);
    expect(server.sent[1]).toMatchObject({ kind: 'unsubscribe', slugs: ['a'] });
    await server.sent[1]!.settle();
    expect(server.held.size).toBe(0);
    expect(rooms.held).toBe(0);
  });

  it('keeps the subscription when a waiter parks again within the linger', async () => {
    const { server, bus, clock, rechecks } = setup();
    const stop = bus.listen('a', () => {});
    await flush();
    await server.sent[0]!.settle();
    stop();
    await clock.advance(500);
    bus.listen('a', () => {});
    await clock.advance(5000);
    expect(server.sent).toHaveLength(1);
    expect(server.held.has('a')).toBe(true);
    // Already subscribed when the waiter read: no re-check needed.
    expect(rechecks).toEqual(['a']);
  });

  it('re-subscribes a room wanted again while its unsubscribe is in flight', async () => {
    const { server, bus, clock, rooms, rechecks } = setup();
    const stop = bus.listen('a', () => {});
    await flush();
    await server.sent[0]!.settle();
    stop();
    await clock.advance(1000);
    expect(server.sent[1]!.kind).toBe('unsubscribe');
    bus.listen('a', () => {});
    await flush();
    // One command in flight per room: the subscribe waits for the unsubscribe's reply.
    expect(server.sent).toHaveLength(2);
    await server.sent[1]!.settle();
    expect(server.sent[2]).toMatchObject({ kind: 'subscribe', slugs: ['a'] });
    await server.sent[2]!.settle();
    expect(server.held.has('a')).toBe(true);
    expect(rooms.isSubscribed('a')).toBe(true);
    expect(rechecks).toEqual(['a', 'a']);
  });

  it('unsubscribes a room released while its subscribe is in flight', async () => {
    const { server, bus, clock, rooms, rechecks } = setup();
    const stop = bus.listen('a', () => {});
    await flush();
    stop();
    await clock.advance(1000);
    expect(server.sent).toHaveLength(1);
    await server.sent[0]!.settle();
    // Nobody listens any more: no re-check, and the subscription the server now holds is undone.
    expect(rechecks).toEqual([]);
    expect(server.sent[1]).toMatchObject({ kind: 'unsubscribe', slugs: ['a'] });
    await server.sent[1]!.settle();
    expect(server.held.size).toBe(0);
    expect(rooms.held).toBe(0);
  });

  it('retries a failed subscribe, and undoes one that may have landed once the room is unwanted', async () => {
    const { server, bus, clock, rooms, rechecks } = setup();
    const stop = bus.listen('a', () => {});
    await flush();
    await server.sent[0]!.fail();
    expect(rooms.isSubscribed('a')).toBe(false);
    await clock.advance(100);
    expect(server.sent[1]).toMatchObject({ kind: 'subscribe', slugs: ['a'] });
    await server.sent[1]!.fail();
    stop();
    await clock.advance(1000);
    // The failed subscribe may still have reached the server: unsubscribe before forgetting the room.
    const last = server.sent.at(-1)!;
    expect(last).toMatchObject({ kind: 'unsubscribe', slugs: ['a'] });
    await last.settle();
    expect(rooms.held).toBe(0);
    expect(rechecks).toEqual([]);
  });

  it('after a reconnect, subscribes every wanted room again and re-checks each once confirmed', async () => {
    const { server, bus, rooms, rechecks } = setup();
    bus.listen('a', () => {});
    await flush();
    await server.sent[0]!.settle();
    rooms.resubscribeAll();
    await flush();
    expect(rooms.isSubscribed('a')).toBe(false);
    expect(server.sent[1]).toMatchObject({ kind: 'subscribe', slugs: ['a'] });
    await server.sent[1]!.settle();
    expect(rechecks).toEqual(['a', 'a']);
  });

  it('does not take a subscribe sent before a reconnect as confirmed', async () => {
    const { server, bus, rooms, rechecks } = setup();
    bus.listen('a', () => {});
    await flush();
    rooms.resubscribeAll();
    await server.sent[0]!.settle();
    expect(rooms.isSubscribed('a')).toBe(false);
    expect(rechecks).toEqual([]);
    expect(server.sent[1]).toMatchObject({ kind: 'subscribe', slugs: ['a'] });
    await server.sent[1]!.settle();
    expect(rechecks).toEqual(['a']);
  });

  it('forgets a room released before its subscribe left, sending nothing', async () => {
    const { server, bus } = setup();
    const stop = bus.listen('a', () => {});
    stop();
    await flush();
    expect(server.sent).toEqual([]);
  });
});
