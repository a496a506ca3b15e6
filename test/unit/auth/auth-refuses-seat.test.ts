/**
 * authRefusesSeat: which seats the room's config.auth shuts out of reading (docs/architecture.md,
 * Engagement: webhooks follow their owner's read access), the same matrix resolveCaller enforces.
 */
import { describe, expect, it } from 'vitest';
import { authRefusesSeat } from '../../../src/auth/caller.js';
import type { AuthMode, Member } from '../../../src/domain/types.js';

function seat(kind: 'token' | 'mandate' | 'both', isCreator = false): Member {
  return {
    id: 'p',
    displayName: 'p',
    role: 'participant',
    isCreator,
    joinedAt: 0,
    deliberatedAt: null,
    votedAt: null,
    tokenHash: kind === 'mandate' ? null : 'a'.repeat(64),
    supersededHashes: [],
    agentDid: kind === 'token' ? null : 'did:key:z6Mk',
    agentIss: kind === 'token' ? null : 'did:key:z6Mk',
    mandateId: kind === 'token' ? null : 'urn:uuid:1',
  };
}

describe('authRefusesSeat', () => {
  const cases: [string, Member, Record<AuthMode, boolean>][] = [
    ['a token seat', seat('token'), { either: false, token_only: false, mandate_required: true }],
    ['a mandate seat', seat('mandate'), { either: false, token_only: true, mandate_required: false }],
    ['a seat both reach', seat('both'), { either: false, token_only: false, mandate_required: false }],
    ["the creator's token seat", seat('token', true), { either: false, token_only: false, mandate_required: false }],
    [
      'the creator seat of a mandate',
      seat('both', true),
      { either: false, token_only: false, mandate_required: false },
    ],
  ];
  it.each(cases)('%s', (_name, member, expected) => {
    for (const mode of ['either', 'token_only', 'mandate_required'] as const) {
      expect(authRefusesSeat(member, mode), mode).toBe(expected[mode]);
    }
  });
});
