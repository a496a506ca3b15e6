import { describe, expect, it } from 'vitest';
import { engineVoterIds, voterIdOf } from '../../../src/mechanisms/index.js';

describe('engineVoterIds: who each ballot counts for (docs/mechanisms.md, Voters)', () => {
  it("keeps a subject's plain agent_id while one issuer votes under it, so the trace reads as before", () => {
    const ballots = [
      { agentId: 'did:key:zA', agentIss: 'did:key:zA' },
      { agentId: 'urn:example:b', agentIss: 'https://issuer.example' },
      { agentId: 'urn:example:b', agentIss: 'https://issuer.example' },
      { agentId: 'participant:p1' },
    ];
    expect(engineVoterIds(ballots)).toEqual(['did:key:zA', 'urn:example:b', 'urn:example:b', 'participant:p1']);
  });

  it('pairs a subject with its issuer once ballots of two issuers name it, so they are two voters', () => {
    const ballots = [
      { agentId: 'urn:example:b', agentIss: 'https://squatter.example' },
      { agentId: 'urn:example:b', agentIss: 'https://issuer.example' },
      { agentId: 'urn:example:c', agentIss: 'https://issuer.example' },
    ];
    const ids = engineVoterIds(ballots);
    expect(ids).toEqual([
      voterIdOf('urn:example:b', 'https://squatter.example'),
      voterIdOf('urn:example:b', 'https://issuer.example'),
      'urn:example:c',
    ]);
    expect(new Set(ids).size).toBe(3);
  });

  it('tells a ballot without an issuer apart from one with an issuer under the same subject', () => {
    const ids = engineVoterIds([{ agentId: 'urn:example:b' }, { agentId: 'urn:example:b', agentIss: 'did:key:zI' }]);
    expect(ids[0]).not.toBe(ids[1]);
  });
});
