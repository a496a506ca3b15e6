/**
 * The table of known credentials (src/auth/known-credentials.ts), in memory and on a real Redis: a
 * mandate is known by its whole token and only while it is valid, and one that failed verification
 * is forgotten, so a stale or edited copy never finds its subject's budget.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type KnownCredentials,
  MemoryKnownCredentials,
  type ProvenCredential,
  RedisKnownCredentials,
} from '../../../src/auth/known-credentials.js';
import { credentialRateKey } from '../../../src/auth/rate-limit.js';
import { protocolError } from '../../../src/errors.js';
import { forgetStale } from '../../../src/operations/run.js';
import type { RequestContext } from '../../../src/operations/types.js';
import { startRedisServer } from '../../support/redis-server.js';

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const MANDATE = `${part({ alg: 'EdDSA', typ: 'svc-mandate+jwt', kid: 'k' })}.${part({ jti: 'urn:uuid:1', sub: 'a' })}.c2ln`;
const EDITED = `${part({ alg: 'EdDSA', typ: 'svc-mandate+jwt', kid: 'k' })}.${part({ jti: 'urn:uuid:1', sub: 'b' })}.c2ln`;
const START = 1_800_000_000_000;
const SUBJECT: ProvenCredential = { bucket: 'cred:subject:x', issuer: null, expiresAt: START + 120_000 };

function contract(name: string, make: (now: () => number) => Promise<KnownCredentials>) {
  describe(name, () => {
    it('keys a mandate by its whole token: a payload-edited copy with the same jti and signature is another key', () => {
      expect(credentialRateKey({ mandate: EDITED })).not.toBe(credentialRateKey({ mandate: MANDATE }));
      expect(credentialRateKey({ mandate: MANDATE })).toBe(credentialRateKey({ mandate: MANDATE }));
    });

    it('knows a mandate until its exp, not a day past it', async () => {
      const clock = { t: START };
      const known = await make(() => clock.t);
      const key = credentialRateKey({ mandate: MANDATE })!;
      await known.remember(key, SUBJECT);
      expect(await known.lookup(key)).toEqual(SUBJECT);
      expect(await known.lookup(credentialRateKey({ mandate: EDITED })!)).toBeNull();
      clock.t = START + 119_999;
      expect(await known.lookup(key)).not.toBeNull();
      clock.t = START + 120_000;
      expect(await known.lookup(key)).toBeNull();
      // An expired mandate proven late (a slow answer) is not remembered at all.
      await known.remember(key, SUBJECT);
      expect(await known.lookup(key)).toBeNull();
    });

    it('forgets a credential at once', async () => {
      const clock = { t: START };
      const known = await make(() => clock.t);
      const key = credentialRateKey({ mandate: MANDATE })!;
      await known.remember(key, SUBJECT);
      await known.forget(key);
      expect(await known.lookup(key)).toBeNull();
    });
  });
}

contract('MemoryKnownCredentials', async (now) => new MemoryKnownCredentials(now));

const server = await startRedisServer();
const connections: Redis[] = [];
afterAll(async () => {
  for (const redis of connections) redis.disconnect();
  await server?.stop();
});

describe.skipIf(server === null)('on Redis', () => {
  contract('RedisKnownCredentials', async (now) => {
    const redis = new Redis(server!.url);
    connections.push(redis);
    return new RedisKnownCredentials(redis, `test-${randomUUID().slice(0, 8)}:`, now);
  });

  it('forgets across processes: another process finds nothing once its memo of the entry is dropped', async () => {
    const clock = { t: START };
    const prefix = `test-${randomUUID().slice(0, 8)}:`;
    const [a, b] = [new Redis(server!.url), new Redis(server!.url)];
    connections.push(a, b);
    const one = new RedisKnownCredentials(a, prefix, () => clock.t);
    const two = new RedisKnownCredentials(b, prefix, () => clock.t);
    const key = credentialRateKey({ mandate: MANDATE })!;
    await one.remember(key, SUBJECT);
    expect(await two.lookup(key)).toEqual(SUBJECT);
    await one.forget(key);
    await two.forget(key);
    expect(await one.lookup(key)).toBeNull();
    expect(await two.lookup(key)).toBeNull();
  });
});

describe('a presented mandate that fails verification', () => {
  const ctxWith = (known: KnownCredentials) => ({ services: { requestRates: { known } } }) as unknown as RequestContext;

  it('is forgotten when the token itself is no good (revoked, expired, signature), not when only its use is', async () => {
    const clock = { t: START };
    const known = new MemoryKnownCredentials(() => clock.t);
    const key = credentialRateKey({ mandate: MANDATE })!;
    await known.remember(key, SUBJECT);
    await forgetStale(ctxWith(known), MANDATE, protocolError('mandate.room_not_in_scope', 'not this room'));
    expect(await known.lookup(key)).not.toBeNull();
    for (const code of ['mandate.revoked', 'mandate.expired', 'mandate.signature_invalid'] as const) {
      await known.remember(key, SUBJECT);
      await forgetStale(ctxWith(known), MANDATE, protocolError(code, 'no good'));
      expect(await known.lookup(key), code).toBeNull();
    }
  });
});
