/** The delivery lanes' turns and limits, and the origin breaker, without I/O. */
import { describe, expect, it } from 'vitest';
import { FIRST_COOL_DOWN_MS, MAX_COOL_DOWN_MS, OriginBreaker } from '../../../src/engagement/webhook-breaker.js';
import { DeliveryLanes, type LanePick } from '../../../src/engagement/webhook-lanes.js';

const LIMITS = { total: 4, perRoom: 2, perOrigin: 2, perEndpoint: 1, perClient: 2 };

function setup(breaker = new OriginBreaker(), limits = LIMITS) {
  const lanes = new DeliveryLanes<string>(limits, breaker);
  const add = (slug: string, url: string, n = 1, client?: string) => {
    for (let i = 0; i < n; i++) {
      lanes.add({ key: `${slug}|${url}|${i}`, slug, url, item: `${slug} ${url} ${i}`, client });
    }
  };
  return { lanes, add, breaker };
}

const sent = (pick: LanePick<string> | null) => (pick?.kind === 'send' ? pick.entry.item : pick);

describe('delivery lanes', () => {
  it("lets rooms take turns, so a room's backlog goes after another room's first delivery", () => {
    const { lanes, add } = setup();
    add('a', 'http://one.test/1');
    add('a', 'http://two.test/1');
    add('a', 'http://three.test/1');
    add('b', 'http://four.test/1');
    expect(sent(lanes.next(0))).toBe('a http://one.test/1 0');
    expect(sent(lanes.next(0))).toBe('b http://four.test/1 0');
    expect(sent(lanes.next(0))).toBe('a http://two.test/1 0');
    // Room a has its 2 in flight.
    expect(lanes.next(0)).toBeNull();
  });

  it('holds one origin to its share and one URL to its own, and frees them when an attempt ends', () => {
    const { lanes, add } = setup();
    add('a', 'http://slow.test/x', 3);
    const first = lanes.next(0);
    expect(sent(first)).toBe('a http://slow.test/x 0');
    // One per URL.
    expect(lanes.next(0)).toBeNull();
    add('b', 'http://slow.test/y');
    add('b', 'http://slow.test/z');
    expect(sent(lanes.next(0))).toBe('b http://slow.test/y 0');
    // Two per origin, across rooms.
    expect(lanes.next(0)).toBeNull();
    lanes.finish((first as { entry: Parameters<typeof lanes.finish>[0] }).entry);
    // Room a's turn again (b went last), and its URL is free.
    expect(sent(lanes.next(0))).toBe('a http://slow.test/x 1');
    expect(lanes.next(0)).toBeNull();
    expect(lanes.size).toBe(4);
    expect(lanes.sending).toBe(2);
    expect(lanes.heldFor('a')).toBe(2);
    expect(lanes.heldFor('b')).toBe(2);
  });

  it("holds one client's subscriptions to its share across rooms and origins, while another client's go at once", () => {
    const { lanes, add } = setup(undefined, { total: 8, perRoom: 2, perOrigin: 2, perEndpoint: 1, perClient: 3 });
    // One client, four rooms of its own, each with endpoints at distinct origins (black holes that
    // would hold every lane they get).
    for (const room of ['m1', 'm2', 'm3', 'm4']) {
      for (let i = 0; i < 3; i++) add(room, `http://${room}-hole${i}.test/x`, 1, 'mallory');
    }
    const picks: string[] = [];
    for (let pick = lanes.next(0); pick; pick = lanes.next(0)) picks.push(sent(pick) as string);
    // The client's share (3), though its rooms (2 each) and the process (8) would allow more.
    expect(picks).toHaveLength(3);
    expect(lanes.sending).toBe(3);
    // Another client's room goes at once, its first delivery before any more of the first client's.
    add('v', 'http://victim.test/1', 2, 'victor');
    expect(sent(lanes.next(0))).toBe('v http://victim.test/1 0');
    // A subscription of the first client's, in a room the other client shares, is held too; the
    // other client's is not.
    add('v', 'http://victim.test/2', 1, 'mallory');
    add('v', 'http://victim.test/3', 1, 'victor');
    expect(sent(lanes.next(0))).toBe('v http://victim.test/3 0');
    expect(lanes.next(0)).toBeNull();
  });

  it('does not hold subscriptions without a client (stored before the share) to it', () => {
    const { lanes, add } = setup(undefined, { total: 8, perRoom: 2, perOrigin: 2, perEndpoint: 1, perClient: 1 });
    for (const room of ['a', 'b', 'c']) add(room, `http://${room}.test/x`, 2);
    for (const room of ['a', 'b', 'c']) add(room, `http://${room}.test/y`, 1);
    const picks: string[] = [];
    for (let pick = lanes.next(0); pick; pick = lanes.next(0)) picks.push(sent(pick) as string);
    // Two per room (one per URL), rooms taking turns, as before clients were recorded.
    expect(picks).toEqual([
      'a http://a.test/x 0',
      'b http://b.test/x 0',
      'c http://c.test/x 0',
      'a http://a.test/y 0',
      'b http://b.test/y 0',
      'c http://c.test/y 0',
    ]);
  });

  it("parks a tripped origin's deliveries until its cool-down, then sends one probe", () => {
    const { lanes, add, breaker } = setup();
    breaker.timedOut('http://dead.test', 0);
    breaker.timedOut('http://dead.test', 0);
    add('a', 'http://dead.test/1', 2);
    const parked = lanes.next(1);
    expect(parked).toMatchObject({ kind: 'park', until: FIRST_COOL_DOWN_MS });
    expect(lanes.next(1)).toMatchObject({ kind: 'park' });
    expect(lanes.size).toBe(0);
    add('a', 'http://dead.test/1', 2);
    expect(sent(lanes.next(FIRST_COOL_DOWN_MS))).toBe('a http://dead.test/1 0');
    // Only the probe is in flight while half-open.
    expect(lanes.next(FIRST_COOL_DOWN_MS)).toBeNull();
  });
});

describe('origin breaker', () => {
  it('trips on the second consecutive timeout, ignores stragglers, doubles on a failed probe, closes on an answer', () => {
    const breaker = new OriginBreaker();
    const origin = 'http://dead.test';
    breaker.timedOut(origin, 0);
    expect(breaker.gate(origin, 0)).toEqual({ kind: 'closed' });
    breaker.timedOut(origin, 0);
    expect(breaker.gate(origin, 1)).toEqual({ kind: 'parked', until: FIRST_COOL_DOWN_MS });
    // Attempts sent before the trip end while parked: no longer.
    breaker.timedOut(origin, 5);
    expect(breaker.gate(origin, 5)).toEqual({ kind: 'parked', until: FIRST_COOL_DOWN_MS });
    expect(breaker.gate(origin, FIRST_COOL_DOWN_MS)).toEqual({ kind: 'probe' });
    let at = FIRST_COOL_DOWN_MS + 10_000;
    breaker.timedOut(origin, at);
    expect(breaker.gate(origin, at)).toEqual({ kind: 'parked', until: at + 2 * FIRST_COOL_DOWN_MS });
    for (let i = 0; i < 10; i++) {
      at += MAX_COOL_DOWN_MS + 10_000;
      breaker.timedOut(origin, at);
    }
    expect(breaker.gate(origin, at)).toEqual({ kind: 'parked', until: at + MAX_COOL_DOWN_MS });
    breaker.answered(origin);
    expect(breaker.gate(origin, at)).toEqual({ kind: 'closed' });
  });
});
