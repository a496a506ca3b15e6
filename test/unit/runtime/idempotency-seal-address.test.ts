/**
 * Credential-bearing idempotent responses are bound to the client's address group (an IPv6 /64):
 * a retry from another address of the /64 opens them, another /64 never does. Records sealed before
 * (bound to the exact address, as the code before this wrote them) still open from that exact
 * address until they expire, and from nowhere else.
 */
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../../src/auth/client-address.js';
import { ResponseSeal, type SealInputs } from '../../../src/runtime/idempotency-seal.js';

const BODY = JSON.stringify({ slug: 'k7mq2xw9pa', creator_token: `t_${'A'.repeat(43)}` });
const RESULT = JSON.parse(BODY);
const base = { idempotencyKey: 'key-1', credentialScope: 'cred-hash', operation: 'POST /api/rooms' };

/** The seal as the request path builds it now: the group, and the exact address beside it. */
const sealFrom = (exact: string) =>
  new ResponseSeal({ ...base, clientAddress: addressGroup(exact), exactClientAddress: exact });
/** The seal as the code before address groups built it: the exact address only. */
const formerSealFrom = (exact: string): ResponseSeal =>
  new ResponseSeal({ ...base, clientAddress: exact } as SealInputs);

const codeOf = (open: () => unknown): string => {
  try {
    open();
    return 'opened';
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('idempotency seals bound to the address group', () => {
  it('a response sealed now opens from any address of the /64, never from another /64', () => {
    const stored = sealFrom('2001:db8:1:2::10').seal(BODY, RESULT);
    expect(sealFrom('2001:db8:1:2:aaaa::77').open(stored)).toBe(BODY);
    expect(codeOf(() => sealFrom('2001:db8:1:3::10').open(stored))).toBe('idempotency.conflict');
    // IPv4 is its own group: nothing changes there.
    const v4 = sealFrom('192.0.2.1').seal(BODY, RESULT);
    expect(sealFrom('192.0.2.1').open(v4)).toBe(BODY);
    expect(codeOf(() => sealFrom('192.0.2.2').open(v4))).toBe('idempotency.conflict');
  });

  it('a record sealed by the code before (exact address) opens from that address only', () => {
    const stored = formerSealFrom('2001:db8:1:2::10').seal(BODY, RESULT);
    expect(sealFrom('2001:db8:1:2::10').open(stored)).toBe(BODY);
    expect(codeOf(() => sealFrom('2001:db8:1:2::11').open(stored))).toBe('idempotency.conflict');
  });

  it('address-bound fingerprints: the group now, the exact address for records written before', () => {
    const seal = sealFrom('2001:db8:1:2::10');
    const fingerprint = seal.fingerprint('{"url":"https://hooks.example.org/x"}');
    const now = seal.addressBoundFingerprint(fingerprint);
    expect(sealFrom('2001:db8:1:2::99').compareBound(now, fingerprint)).toBe('same');
    expect(sealFrom('2001:db8:9:9::10').compareBound(now, fingerprint)).toBe('other_address');
    const before = formerSealFrom('2001:db8:1:2::10').addressBoundFingerprint(fingerprint);
    expect(sealFrom('2001:db8:1:2::10').compareBound(before, fingerprint)).toBe('same');
    expect(sealFrom('2001:db8:1:2::99').compareBound(before, fingerprint)).toBe('other_address');
  });
});
