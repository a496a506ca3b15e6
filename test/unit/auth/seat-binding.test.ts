/**
 * Which mandate seat a mandate reaches (auth/seat-binding.ts): the issuer stored on the seat decides,
 * and one subject's seats of two issuers are two seats, each reached only by its own issuer; seats
 * stored before seats recorded their issuer answer only to an issuer no one else can be.
 */
import { describe, expect, it } from 'vitest';
import { isHostedSubject, type MandateIdentity, mandateSeat } from '../../../src/auth/seat-binding.js';
import type { Member } from '../../../src/domain/types.js';

const seat = (agentDid: string, mandateId: string, agentIss?: string | null, id = 'p1'): Member => ({
  id,
  displayName: 'agent',
  role: 'participant',
  isCreator: false,
  joinedAt: 0,
  deliberatedAt: null,
  votedAt: null,
  tokenHash: null,
  supersededHashes: [],
  agentDid,
  ...(agentIss !== undefined ? { agentIss } : {}),
  mandateId,
});

const mandate = (
  issuerKind: MandateIdentity['issuerKind'],
  issuerPrincipal: string,
  sub: string,
  jti = 'urn:uuid:other',
): MandateIdentity => ({ issuerKind, issuerPrincipal, sub, jti });

describe('mandateSeat', () => {
  it('reaches a seat only with its stored issuer and sub', () => {
    const members = [seat('did:key:zSub', 'urn:uuid:join', 'https://issuer.example')];
    expect(mandateSeat(members, mandate('https', 'https://issuer.example', 'did:key:zSub')).kind).toBe('seat');
    // The subject's own key does not reach the seat another issuer holds (it joins a seat of its own).
    expect(mandateSeat(members, mandate('did:key', 'did:key:zSub', 'did:key:zSub', 'urn:uuid:join')).kind).toBe('none');
    // Any other key naming the subject reaches nothing of it.
    expect(mandateSeat(members, mandate('did:key', 'did:key:zForger', 'did:key:zSub')).kind).toBe('none');
    expect(mandateSeat(members, mandate('https', 'https://issuer.example', 'did:key:zOther')).kind).toBe('none');
  });

  it('decides seats stored without an issuer by who alone could have signed', () => {
    const hosted = [seat('urn:svc:agent:acct_x', 'urn:uuid:join')];
    expect(mandateSeat(hosted, mandate('self', 'https://svc.example', 'urn:svc:agent:acct_x')).kind).toBe('seat');

    const own = [seat('did:key:zSub', 'urn:uuid:join')];
    expect(mandateSeat(own, mandate('did:key', 'did:key:zSub', 'did:key:zSub')).kind).toBe('seat');
    // The published jti in another key's mandate proves nothing.
    expect(mandateSeat(own, mandate('did:key', 'did:key:zForger', 'did:key:zSub', 'urn:uuid:join')).kind).toBe('none');

    const viaHttps = [seat('agent-7', 'urn:uuid:join')];
    expect(mandateSeat(viaHttps, mandate('https', 'https://issuer.example', 'agent-7', 'urn:uuid:join')).kind).toBe(
      'seat',
    );
    expect(mandateSeat(viaHttps, mandate('https', 'https://issuer.example', 'agent-7')).kind).toBe('none');
  });

  it("finds each issuer's own seat among one subject's seats, never another issuer's", () => {
    const members = [
      seat('urn:example:agent:7', 'urn:uuid:a', 'did:key:zSquatter', 'squatter'),
      seat('urn:example:agent:7', 'urn:uuid:b', 'https://issuer.example', 'rightful'),
      seat('urn:example:agent:7', 'urn:uuid:c', null, 'legacy'),
    ];
    const reached = (m: MandateIdentity) => {
      const found = mandateSeat(members, m);
      return found.kind === 'seat' ? found.member.id : null;
    };
    expect(reached(mandate('https', 'https://issuer.example', 'urn:example:agent:7'))).toBe('rightful');
    expect(reached(mandate('did:key', 'did:key:zSquatter', 'urn:example:agent:7'))).toBe('squatter');
    expect(reached(mandate('did:key', 'did:key:zThird', 'urn:example:agent:7', 'urn:uuid:c'))).toBeNull();
    // A seat bound to the issuer comes before an older seat without one that the mandate also proves.
    expect(reached(mandate('https', 'https://issuer.example', 'urn:example:agent:7', 'urn:uuid:c'))).toBe('rightful');
    expect(reached(mandate('https', 'https://other.example', 'urn:example:agent:7', 'urn:uuid:c'))).toBe('legacy');
  });

  it('treats the hosted-agent namespace case-insensitively', () => {
    expect(isHostedSubject('urn:svc:agent:acct_x')).toBe(true);
    expect(isHostedSubject('URN:SVC:Agent:acct_x')).toBe(true);
    expect(isHostedSubject('urn:svc:agents:acct_x')).toBe(false);
    expect(isHostedSubject('did:key:z6Mk')).toBe(false);
  });
});
