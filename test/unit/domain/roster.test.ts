/** The roster's remembered lookups (src/domain/roster.ts): by token hash and by seat name, across the rosters a room's writes make. */
import { describe, expect, it } from 'vitest';
import { memberByTokenHash, seatingOf, uniqueDisplayName, withVoteStamped } from '../../../src/domain/roster.js';
import type { Member, RoomData } from '../../../src/domain/types.js';

function seat(id: string, displayName: string, tokenHash: string | null): Member {
  return {
    id,
    displayName,
    role: 'participant',
    isCreator: false,
    joinedAt: 0,
    deliberatedAt: null,
    votedAt: null,
    tokenHash,
    supersededHashes: [],
    agentDid: null,
    mandateId: null,
  };
}

const roster = (): Member[] => [seat('p1', 'Ada', 'h1'), seat('p2', 'Grace', 'h2'), seat('p3', 'Mandated', null)];
const room = (members: Member[]) => ({ members }) as unknown as RoomData;

describe('memberByTokenHash', () => {
  it('finds the seat a token hash belongs to, and nothing for an unknown one', () => {
    const members = roster();
    expect(memberByTokenHash(members, 'h2')?.id).toBe('p2');
    expect(memberByTokenHash(members, 'h9')).toBeUndefined();
  });

  it('answers for a stamped roster with the stamped record', () => {
    const members = roster();
    expect(memberByTokenHash(members, 'h1')?.votedAt).toBeNull();
    const stamped = withVoteStamped(members, 'p1', 42);
    expect(memberByTokenHash(stamped, 'h1')).toBe(stamped[0]);
    expect(memberByTokenHash(stamped, 'h1')?.votedAt).toBe(42);
  });

  it('follows a rotated token on the next roster: the new hash finds the seat, the old one no longer does', () => {
    const members = roster();
    expect(memberByTokenHash(members, 'h1')?.id).toBe('p1');
    const rotated = members.map((m) => (m.id === 'p1' ? { ...m, tokenHash: 'h1b', supersededHashes: ['h1'] } : m));
    expect(memberByTokenHash(rotated, 'h1b')?.id).toBe('p1');
    expect(memberByTokenHash(rotated, 'h1')).toBeUndefined();
  });

  it('keeps the first seat when two records carry one hash, as a scan from the front would', () => {
    const members = [seat('a', 'A', 'same'), seat('b', 'B', 'same')];
    expect(memberByTokenHash(members, 'same')?.id).toBe('a');
  });
});

describe('uniqueDisplayName', () => {
  it('numbers a name that reads like one on the roster, whatever its case, width or spacing', () => {
    const members = roster();
    expect(uniqueDisplayName(room(members), 'Linus')).toBe('Linus');
    expect(uniqueDisplayName(room(members), 'ada')).toBe('ada (2)');
    expect(uniqueDisplayName(room(members), 'Ｇｒａｃｅ')).toBe('Ｇｒａｃｅ (2)');
    expect(uniqueDisplayName(room([...members, seat('p4', 'ada (2)', 'h4')]), 'ADA')).toBe('ADA (3)');
  });

  it('frees a name once its seat is renamed on a later roster', () => {
    const members = roster();
    expect(uniqueDisplayName(room(members), 'Ada')).toBe('Ada (2)');
    const renamed = members.map((m) => (m.id === 'p1' ? { ...m, displayName: 'Countess' } : m));
    expect(uniqueDisplayName(room(renamed), 'Ada')).toBe('Ada');
    expect(uniqueDisplayName(room(renamed), 'countess')).toBe('countess (2)');
  });
});

describe('seatingOf', () => {
  it('stays the same across vote stamps and changes with any other roster', () => {
    const members = roster();
    const stamped = withVoteStamped(withVoteStamped(members, 'p1', 42), 'p2', 43);
    expect(seatingOf(stamped)).toBe(seatingOf(members));
    expect(seatingOf([...members, seat('p4', 'Linus', 'h4')])).not.toBe(seatingOf(members));
    expect(seatingOf(members.slice())).not.toBe(seatingOf(members));
  });
});
