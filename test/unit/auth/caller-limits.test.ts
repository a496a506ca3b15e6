/**
 * The decision of the limits by caller (docs/architecture.md, Rate limits by caller): which budget a
 * call is counted on, given what it presents and what the service has proven about it.
 */
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { type LimitSettings, limitCall, limitsCallsByCaller } from '../../../src/auth/caller-limits.js';
import { limitMcpMessage } from '../../../src/http/rate-limit-hook.js';
import { KNOWN_FOR_MS, MemoryKnownCredentials, mintedToken } from '../../../src/auth/known-credentials.js';
import { type Budget, credentialRateKey, MemoryRateCounters } from '../../../src/auth/rate-limit.js';

const SETTINGS: LimitSettings = {
  ipPerMinute: 2,
  credentialPerMinute: 0,
  createPerHour: 0,
  credentialCallsPerMinute: 3,
  issuerPerMinute: 0,
  authenticatedIpPerMinute: 0,
  mcpSetupPerMinute: 0,
};

function harness(now = { t: 1_000_000 }) {
  const counters = new MemoryRateCounters();
  const known = new MemoryKnownCredentials(() => now.t);
  const buckets: string[] = [];
  const take = (budgets: readonly Budget[]) => {
    buckets.push(...budgets.map(({ key }) => key));
    return counters.takeAll(budgets, 60_000, now.t);
  };
  return { known, take, buckets, now };
}

describe('limitCall', () => {
  it('counts an unknown bearer on the address and a known one on its own budget', async () => {
    const { known, take, buckets } = harness();
    await known.remember(credentialRateKey({ bearer: 't_real' })!, mintedToken('t_real'));
    expect(await limitCall(SETTINGS, known, take, { bearer: 't_garbage' }, '10.0.0.1', false)).toBeNull();
    expect(await limitCall(SETTINGS, known, take, { bearer: 't_real' }, '10.0.0.1', false)).toBeNull();
    expect(buckets).toEqual(['ip:10.0.0.1', mintedToken('t_real').bucket]);
  });

  it('counts a minting call on the address even with a known credential', async () => {
    const { known, take, buckets } = harness();
    await known.remember(credentialRateKey({ bearer: 't_real' })!, mintedToken('t_real'));
    await limitCall(SETTINGS, known, take, { bearer: 't_real' }, '10.0.0.1', true);
    expect(buckets).toEqual(['ip:10.0.0.1']);
  });

  it('falls back to the address when the table of known credentials cannot answer', async () => {
    const { take, buckets } = harness();
    const broken = {
      lookup: () => Promise.reject(new Error('redis away')),
      remember: async () => {},
      forget: async () => {},
    };
    await limitCall(SETTINGS, broken, take, { bearer: 't_real' }, '10.0.0.1', false);
    expect(buckets).toEqual(['ip:10.0.0.1']);
  });

  it('refuses with the bucket that ran out', async () => {
    const { known, take } = harness();
    await known.remember(credentialRateKey({ bearer: 't_real' })!, mintedToken('t_real'));
    for (let i = 0; i < 3; i++)
      expect(await limitCall(SETTINGS, known, take, { bearer: 't_real' }, 'a', false)).toBeNull();
    const refusal = await limitCall(SETTINGS, known, take, { bearer: 't_real' }, 'a', false);
    expect(refusal?.error.toSpec()).toMatchObject({
      code: 'rate_limit.exceeded',
      details: { scope: 'credential', limit: 3, bucket: 'credential_calls' },
    });
  });

  it('counts a refused call on none of its budgets', async () => {
    const { known, take } = harness();
    await known.remember(credentialRateKey({ bearer: 't_real' })!, mintedToken('t_real'));
    const settings = { ...SETTINGS, credentialCallsPerMinute: 5, authenticatedIpPerMinute: 2 };
    for (let i = 0; i < 2; i++)
      expect(await limitCall(settings, known, take, { bearer: 't_real' }, 'a', false)).toBeNull();
    // The address's ceiling is reached: the credential's own budget is not charged for the refusals.
    for (let i = 0; i < 5; i++) {
      const refusal = await limitCall(settings, known, take, { bearer: 't_real' }, 'a', false);
      expect(refusal?.error.toSpec()).toMatchObject({ details: { bucket: 'authenticated_ip' } });
    }
    expect(await limitCall(settings, known, take, { bearer: 't_real' }, 'b', false)).toBeNull();
    expect(await limitCall(settings, known, take, { bearer: 't_real' }, 'b', false)).toBeNull();
    expect(await limitCall(settings, known, take, { bearer: 't_real' }, 'c', false)).toBeNull();
    const refusal = await limitCall(settings, known, take, { bearer: 't_real' }, 'c', false);
    expect(refusal?.error.toSpec()).toMatchObject({ details: { bucket: 'credential_calls', limit: 5 } });
  });

  it('forgets a credential not proven again within a day', async () => {
    const { known, now } = harness();
    const key = credentialRateKey({ bearer: 't_real' })!;
    await known.remember(key, mintedToken('t_real'));
    now.t += KNOWN_FOR_MS - 1;
    expect(await known.lookup(key)).not.toBeNull();
    now.t += 1;
    expect(await known.lookup(key)).toBeNull();
  });
});

describe('limitsCallsByCaller', () => {
  const OFF: LimitSettings = {
    ipPerMinute: 0,
    credentialPerMinute: 0,
    createPerHour: 0,
    credentialCallsPerMinute: 0,
    issuerPerMinute: 0,
    authenticatedIpPerMinute: 0,
    mcpSetupPerMinute: 0,
  };

  it('is off only when every limit the request hook counts is off', async () => {
    expect(limitsCallsByCaller(OFF)).toBe(false);
    // Creation and MCP setup are counted elsewhere (creation-limit.ts, limitMcpMessage): not by the hook.
    expect(limitsCallsByCaller({ ...OFF, createPerHour: 5, mcpSetupPerMinute: 5 })).toBe(false);
    for (const key of [
      'ipPerMinute',
      'credentialPerMinute',
      'credentialCallsPerMinute',
      'issuerPerMinute',
      'authenticatedIpPerMinute',
    ] as const) {
      expect(limitsCallsByCaller({ ...OFF, [key]: 1 })).toBe(true);
    }
    // With all of them off a call is never refused, whatever it presents.
    const { known, take, buckets } = harness();
    expect(await limitCall(OFF, known, take, { bearer: 't_any' }, '10.0.0.1', false)).toBeNull();
    expect(buckets).toEqual([]);
  });
});

describe('limitMcpMessage', () => {
  const settings: LimitSettings = { ...SETTINGS, ipPerMinute: 0, credentialCallsPerMinute: 0, credentialPerMinute: 1 };
  const log = { warn: () => {} } as unknown as FastifyBaseLogger;
  const message = (name: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: { token: 't_real' } },
  });

  it('counts a mutating tool call on the per-credential limit, and a read on none', async () => {
    const counter = new MemoryRateCounters();
    const limits = { counter, known: new MemoryKnownCredentials(() => 0), settings };
    const mutating = new Set(['choose']);
    const limit = (name: string) => limitMcpMessage(limits, message(name), undefined, 'a', 1_000, log, mutating);
    expect(await limit('read_room')).toBeNull();
    expect(await limit('choose')).toBeNull();
    expect(await limit('read_room')).toBeNull();
    const refusal = await limit('choose');
    expect(refusal?.inTool).toBe(true);
    expect(refusal?.error.toSpec()).toMatchObject({ details: { scope: 'credential', limit: 1 } });
  });
});
