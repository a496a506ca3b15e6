/** The guess throttle's rules on the in-memory counters, with an injected clock. */
import { describe, expect, it } from 'vitest';
import { GuessThrottle, guessIn } from '../../../src/auth/guess-throttle.js';
import { MemoryRateCounters } from '../../../src/auth/rate-limit.js';
import { protocolError } from '../../../src/errors.js';
import { StoreUnavailableError } from '../../../src/store/port.js';

const wrong = () => Promise.reject(protocolError('auth.invalid_password', 'wrong'));

function setup() {
  let now = 1_000_000;
  const throttle = new GuessThrottle(new MemoryRateCounters(), () => now);
  return { throttle, advance: (ms: number) => (now += ms) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

describe('guess throttle', () => {
  it('holds an address after 5 wrong guesses on a room for a minute; right guesses cost nothing', async () => {
    const { throttle, advance } = setup();
    const guess = { slug: 'room1', address: '203.0.113.1' };
    for (let i = 0; i < 10; i++) expect(await codeOf(throttle.guard(guess, async () => 'ok'))).toBe('ok');
    for (let i = 0; i < 5; i++) expect(await codeOf(throttle.guard(guess, wrong))).toBe('auth.invalid_password');
    let ran = false;
    const held = await throttle.guard(guess, async () => (ran = true)).catch((e) => e);
    expect(held.code).toBe('rate_limit.exceeded');
    expect(held.headers['retry-after']).toBe('60');
    expect(ran).toBe(false);
    advance(60_001);
    expect(await codeOf(throttle.guard(guess, async () => 'ok'))).toBe('ok');
  });

  it('backs off: after 20 wrong in an hour the answer names the hour tier and its longer wait', async () => {
    const { throttle, advance } = setup();
    const guess = { slug: 'room4', address: '203.0.113.4' };
    for (let burst = 0; burst < 4; burst++) {
      for (let i = 0; i < 5; i++) expect(await codeOf(throttle.guard(guess, wrong))).toBe('auth.invalid_password');
      advance(61_000);
    }
    const held = await throttle.guard(guess, wrong).catch((e) => e);
    expect(held.code).toBe('rate_limit.exceeded');
    expect(held.details).toMatchObject({ scope: 'guess', limit: 20, window_seconds: 3600 });
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(3000);
  });

  it('counts guesses in flight, so a concurrent burst is held before any has failed', async () => {
    const { throttle } = setup();
    const guess = { slug: 'room2', address: '203.0.113.2' };
    const slow = () =>
      new Promise<never>((_, reject) => setTimeout(() => reject(protocolError('auth.invalid_password', 'x')), 20));
    const codes = await Promise.all(Array.from({ length: 12 }, () => codeOf(throttle.guard(guess, slow))));
    expect(codes.filter((c) => c === 'auth.invalid_password')).toHaveLength(5);
    expect(codes.filter((c) => c === 'rate_limit.exceeded')).toHaveLength(7);
  });

  it('the room ceiling holds a room under attack for every guesser, first guesses included', async () => {
    const { throttle, advance } = setup();
    // 100 addresses guessing the room once each: the room's 20 a minute, then every guess is held.
    const codes: string[] = [];
    for (let a = 0; a < 100; a++) {
      codes.push(await codeOf(throttle.guard({ slug: 'room3', address: `198.51.100.${a + 1}` }, wrong)));
    }
    expect(codes.slice(0, 20)).toEqual(Array(20).fill('auth.invalid_password'));
    expect(codes.slice(20)).toEqual(Array(80).fill('rate_limit.exceeded'));
    // A clean address is held too while the room is under attack, for the room's minute at most.
    const held = await throttle.guard({ slug: 'room3', address: '192.0.2.1' }, async () => 'ok').catch((e) => e);
    expect(held.code).toBe('rate_limit.exceeded');
    expect(held.details).toMatchObject({ scope: 'guess', limit: 20, window_seconds: 60 });
    expect(Number(held.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another room is not held by this one's ceiling.
    expect(await codeOf(throttle.guard({ slug: 'room5', address: '192.0.2.1' }, async () => 'ok'))).toBe('ok');
    advance(60_001);
    expect(await codeOf(throttle.guard({ slug: 'room3', address: '192.0.2.1' }, async () => 'ok'))).toBe('ok');
  });

  it('counts an IPv6 client by its /64: a fresh address per guess is the same guesser', async () => {
    const { throttle } = setup();
    const codes: string[] = [];
    for (let i = 0; i < 7; i++) {
      codes.push(
        await codeOf(throttle.guard({ slug: 'room6', address: `2001:db8:7:7::${(i + 1).toString(16)}` }, wrong)),
      );
    }
    expect(codes).toEqual([...Array(5).fill('auth.invalid_password'), 'rate_limit.exceeded', 'rate_limit.exceeded']);
    // Another /64 is another client.
    expect(await codeOf(throttle.guard({ slug: 'room7', address: '2001:db8:7:8::1' }, async () => 'ok'))).toBe('ok');
  });

  it('fails closed when the counters cannot answer', async () => {
    const broken = {
      check: () => Promise.reject(new Error('redis away')),
      record: () => Promise.reject(new Error('redis away')),
    };
    const throttle = new GuessThrottle(broken, () => 0);
    let ran = false;
    const error = await throttle.guard({ slug: 'r', address: 'a' }, async () => (ran = true)).catch((e) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(ran).toBe(false);
  });

  it('takes only passwords, invites and non-minted bearer tokens as guesses', () => {
    const ctx = (credentials: Record<string, string>) => ({ clientIp: '192.0.2.9', credentials });
    const minted = `t_${'A'.repeat(43)}`;
    expect(guessIn(ctx({ bearer: minted }), { slug: 's' })).toBeNull();
    expect(guessIn(ctx({}), { question: 'q', password: 'new room password' })).toBeNull();
    expect(guessIn(ctx({ password: 'x' }), { slug: 's' })).toEqual({ slug: 's', address: '192.0.2.9' });
    expect(guessIn(ctx({}), { slug: 's', invite: 'it_short' })).toEqual({ slug: 's', address: '192.0.2.9' });
    expect(guessIn(ctx({ bearer: 'maybe-the-admin-token' }), {})).toEqual({ slug: null, address: '192.0.2.9' });
  });
});
