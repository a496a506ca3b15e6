/**
 * A stale copy of a mandate spends only its presenter's budget (docs/architecture.md, Rate limits by
 * caller). An attacker holds a copy of an agent's mandate — one that expired, or one whose payload
 * it edited (the signature kept) — and replays it from another address. The limiter runs before
 * the mandate is verified; if it charged the copy to the subject's budget because the service once
 * knew it, 600 replays would lock the agent's valid new mandate out with 429. The copy must count
 * on the replaying address until it verifies. The clock is a ManualClock that moves only when told,
 * so the whole flood falls within one minute's window.
 */
import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  type SigningKey,
  signCompact,
} from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { freshAgentKey } from '../support/mandates.js';
import { call, type RunningService, startService } from '../support/service.js';

const LIMITS = {
  RATE_LIMIT_IP_PER_MIN: '600',
  RATE_LIMIT_CREDENTIAL_PER_MIN: '120',
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '600',
  RATE_LIMIT_ISSUER_PER_MIN: '12000',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '30000',
};
const REPLAYS = 600;

/** A did:key mandate for every room, valid from the service clock's `now` for `seconds`. */
function mandateAt(signer: SigningKey, nowMs: number, seconds: number): string {
  const iss = didKeyFromPublicKey(rawPublicKey(signer.publicKey));
  const now = Math.floor(nowMs / 1000);
  return signCompact(
    { alg: 'EdDSA', kid: iss, typ: MANDATE_TYP },
    {
      iss,
      sub: iss,
      jti: `urn:uuid:${randomUUID()}`,
      iat: now,
      exp: now + seconds,
      svc: { rooms: ['*'], actions: ['member_join_request', 'discuss', 'choose'] },
    },
    signer,
  );
}

/** The same token with one payload claim changed; the signature is kept (so it no longer verifies). */
function editedPayload(jws: string): string {
  const [header, payload, signature] = jws.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
  claims.svc.actions = [...claims.svc.actions, 'propose'];
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

/** GET from another loopback address (the attacker's), with a mandate; the status. */
function getFrom(localAddress: string, base: string, path: string, mandate: string): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'GET',
        localAddress,
        headers: { 'x-mandate': mandate },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function replay(base: string, path: string, mandate: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < REPLAYS; start += 50) {
    const batch = Array.from({ length: Math.min(50, REPLAYS - start) }, () =>
      getFrom('127.0.0.2', base, path, mandate),
    );
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

describe('a stale copy of a mandate replayed from another address', () => {
  const clock = new ManualClock(Date.parse('2026-12-05T12:00:00Z'));
  let svc: RunningService;
  let slug: string;
  const agent = freshAgentKey();
  beforeAll(async () => {
    svc = await startService({ clock, env: { ...LIMITS, MANDATE_ALLOW_SELF_ISSUED: 'true' } });
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which?', options: ['alpha', 'beta'], config: { visibility: 'public', type: 'persistent' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    slug = created.body.slug;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const agentCall = (mandate: string) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { headers: { 'x-mandate': mandate }, body: { body: 'hi' } });

  it('never refuses the agent its valid mandate after 600 replays of its expired one', async () => {
    const old = mandateAt(agent, clock.now(), 120);
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      headers: { 'x-mandate': old },
      body: { display_name: 'agent' },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    // The old mandate proves the seat, so the service knows it.
    expect((await agentCall(old)).status).toBe(200);
    clock.advance(5 * 60_000);
    const fresh = mandateAt(agent, clock.now(), 3600);
    expect((await agentCall(fresh)).status).toBe(200);

    const statuses = await replay(svc.base, `/api/rooms/${slug}`, old);
    // Every replay is refused as expired, or by the replaying address's own budget.
    expect(
      statuses.every((s) => s === 401 || s === 403 || s === 429),
      JSON.stringify([...new Set(statuses)]),
    ).toBe(true);
    const after = await agentCall(fresh);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  }, 60_000);

  it('never refuses the agent its valid mandate after 600 replays of a payload-edited copy of it', async () => {
    clock.advance(61_000);
    const fresh = mandateAt(agent, clock.now(), 3600);
    expect((await agentCall(fresh)).status).toBe(200);
    const edited = editedPayload(fresh);
    const statuses = await replay(svc.base, `/api/rooms/${slug}`, edited);
    expect(
      statuses.every((s) => s === 401 || s === 403 || s === 429),
      JSON.stringify([...new Set(statuses)]),
    ).toBe(true);
    const after = await agentCall(fresh);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  }, 60_000);
});
