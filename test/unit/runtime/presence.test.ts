/** Presence is a hint kept in memory: bounded, the least recently read rooms forgotten first. */
import { describe, expect, it } from 'vitest';
import { Presence } from '../../../src/runtime/presence.js';

describe('Presence', () => {
  it('remembers at most maxRooms rooms, forgetting the least recently read', () => {
    const presence = new Presence(2);
    presence.mark('a', 'p1', 1);
    presence.mark('b', 'p1', 2);
    presence.mark('a', 'p2', 3); // a is now the most recent
    presence.mark('c', 'p1', 4);
    expect(presence.lastSeen('b', 'p1')).toBeNull();
    expect(presence.lastSeen('a', 'p1')).toBe(1);
    expect(presence.lastSeen('a', 'p2')).toBe(3);
    expect(presence.lastSeen('c', 'p1')).toBe(4);
  });
});
