/**
 * A connection opened with a mandate is re-verified while it stays open, because a revocation is not
 * a room commit: the watch ends it with `mandate.revoked` at the next re-verification (every
 * MANDATE_RECHECK_MS), and with `mandate.expired` at `exp`. An issuer that cannot be reached is not
 * a revocation.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyMandate } from '../../../src/auth/mandates.js';
import type { RoomState } from '../../../src/domain/state.js';
import { MANDATE_RECHECK_MS, type SessionEnd, watchCredential } from '../../../src/engagement/credential-watch.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { BASE, claims, keyFromByte, NOW, NOW_S, sign, testDeps } from '../auth/fixtures.js';

const ISSUER = 'https://issuer.test';
const key = keyFromByte(21);
// A public room where the mandate's subject holds no seat: the watch tracks only the mandate itself.
const state = {
  slug: 'room',
  head: 1,
  room: { members: [], invites: [], config: { auth: 'either', visibility: 'public' }, passwordHash: null },
  decisions: [],
  concluded: false,
} as unknown as RoomState;

async function opened(exp = NOW_S + 3600) {
  const deps = await testDeps();
  deps.network.documents.set(ISSUER, { keys: [key], maxAgeMs: 0 });
  const payload = claims({ iss: ISSUER, exp });
  const jws = sign(payload, key);
  const clock = new ManualClock(NOW);
  const verified = await verifyMandate(
    jws,
    { now: NOW, roomSlug: 'room', roomUrl: `${BASE}/r/room`, action: null, mutating: false },
    deps,
  );
  const watch = watchCredential(
    { auth: { adminTokenHash: null }, clock, mandates: deps, baseUrl: BASE },
    'room',
    state,
    { mandate: jws, verified },
  )!;
  const ends: SessionEnd[] = [];
  const disarm = watch.arm((end) => ends.push(end));
  return { deps, jti: payload.jti, clock, watch, ends, disarm };
}

describe('the credential watch of a mandate connection', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends with mandate.revoked at the first re-verification after the issuer revokes it', async () => {
    const { deps, jti, ends, disarm } = await opened();
    await vi.advanceTimersByTimeAsync(MANDATE_RECHECK_MS);
    expect(ends).toEqual([]);
    deps.network.documents.set(ISSUER, { keys: [key], revoked: [jti], maxAgeMs: 0 });
    await vi.advanceTimersByTimeAsync(MANDATE_RECHECK_MS);
    expect(ends.map((end) => end.error?.code)).toEqual(['mandate.revoked']);
    await vi.advanceTimersByTimeAsync(MANDATE_RECHECK_MS * 3);
    expect(ends).toHaveLength(1);
    disarm();
  });

  it('keeps the connection while the issuer cannot be reached', async () => {
    const { deps, ends, disarm } = await opened();
    deps.network.documents.set(ISSUER, new Error('connection refused'));
    await vi.advanceTimersByTimeAsync(MANDATE_RECHECK_MS * 3);
    expect(ends).toEqual([]);
    disarm();
  });

  it('ends with mandate.expired at exp, and every later check says so', async () => {
    const { clock, watch, ends, disarm } = await opened(NOW_S + 5);
    expect(watch.check(state)).toBeNull();
    await vi.advanceTimersByTimeAsync(5000);
    expect(ends.map((end) => end.error?.code)).toEqual(['mandate.expired']);
    clock.advance(5000);
    expect(watch.check(state)?.error?.code).toBe('mandate.expired');
    disarm();
  });
});
