/**
 * A parked connection's credential is re-checked on every commit, but the token is hashed again only
 * when the roster's seating changed (domain/roster.ts, seatingOf): a choice stamps its voter and
 * keeps every seat, so the ten thousand waiters one choice wakes do not hash their tokens again.
 */
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/auth/secrets.js';
import { withVoteStamped } from '../../../src/domain/roster.js';
import type { RoomState } from '../../../src/domain/state.js';
import type { Member } from '../../../src/domain/types.js';
import { watchCredential } from '../../../src/engagement/credential-watch.js';
import { ManualClock } from '../../../src/runtime/clock.js';

function seat(id: string, token: string): Member {
  return {
    id,
    displayName: id,
    role: 'participant',
    isCreator: false,
    joinedAt: 0,
    deliberatedAt: null,
    votedAt: null,
    tokenHash: hashSecret(token),
    supersededHashes: [],
    agentDid: null,
    mandateId: null,
  };
}

const stateWith = (members: Member[]) =>
  ({
    slug: 'room',
    head: 1,
    room: { members, invites: [], config: { auth: 'either', visibility: 'private' }, passwordHash: null },
    decisions: [],
    concluded: false,
  }) as unknown as RoomState;

describe('a token watch across commits', () => {
  it('hashes the token again only when the seating changed, not for a vote stamp', () => {
    const members = [seat('p1', 'token-1'), seat('p2', 'token-2')];
    const opened = stateWith(members);
    const services = { auth: { adminTokenHash: null }, clock: new ManualClock(0), mandates: null, baseUrl: 'http://x' };
    const joined = stateWith([...members, seat('p3', 'token-3')]);
    // Every resolution of the credential reads the presented token (and hashes it); the memo reads nothing.
    let reads = 0;
    const presented = {
      get bearer() {
        reads++;
        return 'token-1';
      },
    };
    const watch = watchCredential(services, 'room', opened, presented)!;
    expect(watch.check(opened)).toBeNull();
    reads = 0;

    expect(watch.check(stateWith(withVoteStamped(members, 'p2', 5)))).toBeNull();
    expect(reads).toBe(0);

    expect(watch.check(joined)).toBeNull();
    expect(reads).toBeGreaterThan(0);
  });
});
