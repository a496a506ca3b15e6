/**
 * Sessions end with their credential. The attack: a session keeps an SSE stream, a REST long-poll and
 * an MCP `wait` open with its participant token; the seat is then recovered by another session (the
 * token becomes `participant.token_superseded`) or the operator revokes the seat's invite. Before,
 * the evicted session kept receiving every event for up to 30 minutes; now each connection ends
 * within a second: the stream closes, the waits answer the superseded 401 (or, for a revoked invite,
 * whose holder's token stays valid, return so the next call re-authenticates). On the embedded store,
 * and on Redis with the connections parked on one process and the eviction made on another.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  signCompact,
  signingKeyFromSeed,
} from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { connectModern, type McpSession } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { openSse, type SseConnection } from '../support/sse-client.js';

/** A room whose second seat came from a named invite: the seat a recovery or revocation targets. */
async function invitedSeat(base: string) {
  const created = await call(base, 'POST', '/api/rooms', {
    body: { about: 'Evictions', config: { visibility: 'public' } },
  });
  const slug = created.body.slug as string;
  const creator = created.body.creator_token as string;
  const invite = await call(base, 'POST', `/api/rooms/${slug}/invites`, { token: creator, body: { label: 'seat' } });
  expect(invite.status).toBe(200);
  const joined = await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { invite: invite.body.invite_token } });
  expect(joined.status).toBe(200);
  return {
    slug,
    creator,
    inviteToken: invite.body.invite_token as string,
    code: invite.body.invite.code as string,
    token: joined.body.participant_token as string,
  };
}

interface Sessions {
  stream: SseConnection;
  poll: Promise<{ status: number; body: any; at: number }>;
  mcpWait: Promise<{ isError: boolean; body: any; at: number }>;
}

/** Opens the three parked connections with one token on `base`; resolves once all three are parked. */
async function openSessions(svc: RunningService, mcp: McpSession, slug: string, token: string): Promise<Sessions> {
  const streamsBefore = svc.service.engagement.streams.size;
  const parkedBefore = svc.service.engagement.waiters.parked;
  const stream = await openSse(`${svc.base}/api/rooms/${slug}/events/stream`, { authorization: `Bearer ${token}` });
  expect(stream.status).toBe(200);
  const poll = call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=30`, { token }).then((r) => ({
    ...r,
    at: performance.now(),
  }));
  const mcpWait = mcp.call('wait', { slug, token, wait_seconds: 30 }).then((r) => ({ ...r, at: performance.now() }));
  await eventually(
    () =>
      svc.service.engagement.streams.size === streamsBefore + 1 &&
      svc.service.engagement.waiters.parked === parkedBefore + 2,
  );
  return { stream, poll, mcpWait };
}

async function endedAt(stream: SseConnection): Promise<number> {
  await eventually(() => stream.ended(), 5000);
  return performance.now();
}

/** Every connection ended within a second of `since`; returns what each answered. */
async function expectAllEnded(sessions: Sessions, since: number) {
  const [streamEnd, poll, mcpWait] = await Promise.all([endedAt(sessions.stream), sessions.poll, sessions.mcpWait]);
  expect(streamEnd - since).toBeLessThan(1000);
  expect(poll.at - since).toBeLessThan(1000);
  expect(mcpWait.at - since).toBeLessThan(1000);
  const lastComment = sessions.stream.frames.flatMap((f) => f.comments).at(-1);
  return { poll, mcpWait, lastComment };
}

function evictionSuite(
  name: string,
  setup: () => Promise<{ local: RunningService; remote: string; stop(): Promise<void> }>,
) {
  describe(name, () => {
    let local: RunningService;
    let remote: string;
    let mcp: McpSession;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      ({ local, remote, stop } = await setup());
      mcp = await connectModern(`${local.base}/mcp`);
    });
    afterAll(async () => {
      await mcp?.close();
      await stop?.();
    });

    it('ends the stream, the long-poll and the MCP wait of a token superseded by seat recovery', async () => {
      const seat = await invitedSeat(remote);
      const sessions = await openSessions(local, mcp, seat.slug, seat.token);
      const framesBefore = sessions.stream.frames.length;
      const recovered = await call(remote, 'POST', `/api/rooms/${seat.slug}/join`, {
        body: { invite: seat.inviteToken },
      });
      const since = performance.now();
      expect(recovered.body.recovered).toBe(true);
      const { poll, mcpWait, lastComment } = await expectAllEnded(sessions, since);
      expect([poll.status, poll.body.error?.code]).toEqual([401, 'participant.token_superseded']);
      expect(mcpWait.isError).toBe(true);
      expect(JSON.stringify(mcpWait.body)).toContain('participant.token_superseded');
      expect(lastComment).toContain('participant.token_superseded');
      // The evicted session saw none of the recovery's events, and cannot come back.
      expect(sessions.stream.frames.filter((f) => f.data).length).toBe(
        sessions.stream.frames.slice(0, framesBefore).filter((f) => f.data).length,
      );
      const again = await openSse(`${local.base}/api/rooms/${seat.slug}/events/stream`, {
        authorization: `Bearer ${seat.token}`,
      });
      expect([again.status, again.error.error.code]).toEqual([401, 'participant.token_superseded']);
    });

    it("ends them when the seat's invite is revoked, while the current token keeps working", async () => {
      const seat = await invitedSeat(remote);
      const sessions = await openSessions(local, mcp, seat.slug, seat.token);
      const revoked = await call(remote, 'DELETE', `/api/rooms/${seat.slug}/invites/${seat.code}`, {
        token: seat.creator,
      });
      const since = performance.now();
      expect(revoked.status).toBe(200);
      const { poll, mcpWait, lastComment } = await expectAllEnded(sessions, since);
      expect([poll.status, poll.body.status]).toEqual([200, 'timeout']);
      expect(mcpWait.isError).toBe(false);
      expect(lastComment).toContain('invite_revoked');
      // Revoking an invite neither removes the member nor invalidates its token (docs/architecture.md).
      const read = await call(local.base, 'GET', `/api/rooms/${seat.slug}`, { token: seat.token });
      expect(read.status).toBe(200);
    });

    it('keeps the stream of a seat whose unrelated commits arrive', async () => {
      const seat = await invitedSeat(remote);
      const stream = await openSse(`${local.base}/api/rooms/${seat.slug}/events/stream`, {
        authorization: `Bearer ${seat.token}`,
      });
      await call(remote, 'POST', `/api/rooms/${seat.slug}/discuss`, {
        token: seat.creator,
        body: { body: 'still here?' },
      });
      const [frame] = await stream.waitFor(1);
      expect(JSON.parse(frame!.data!)).toMatchObject({ data: { body: 'still here?' } });
      expect(stream.ended()).toBe(false);
      stream.close();
    });
  });
}

evictionSuite('sessions end with their credential (embedded store)', async () => {
  const svc = await startService();
  return { local: svc, remote: svc.base, stop: () => svc.stop() };
});

describe('a seat recovery outlives the process that made it', () => {
  it('keeps the old token superseded and the new one valid across a restart', async () => {
    // A recovery makes no event; before, it was never committed, so a restart brought the evicted token back.
    const first = await startService();
    const seat = await invitedSeat(first.base);
    const recovered = await call(first.base, 'POST', `/api/rooms/${seat.slug}/join`, {
      body: { invite: seat.inviteToken },
    });
    expect(recovered.body.recovered).toBe(true);
    await first.stop({ keepData: true });
    const second = await startService({ dataDir: first.dataDir });
    try {
      const evicted = await call(second.base, 'GET', `/api/rooms/${seat.slug}`, { token: seat.token });
      expect([evicted.status, evicted.body.error?.code]).toEqual([401, 'participant.token_superseded']);
      const current = await call(second.base, 'GET', `/api/rooms/${seat.slug}`, {
        token: recovered.body.participant_token,
      });
      expect(current.status).toBe(200);
    } finally {
      await second.stop();
      await rm(first.dataDir, { recursive: true, force: true });
    }
  });
});

const redis = await startRedisServer();

describe.skipIf(redis === null)('on Redis, across two processes', () => {
  afterAll(async () => {
    await redis?.stop();
  });
  evictionSuite('sessions parked on one process end on an eviction made on the other', async () => {
    const env = {
      STORE: 'redis',
      REDIS_URL: redis?.url ?? '',
      REDIS_KEY_PREFIX: `sessions-${randomUUID().slice(0, 8)}:`,
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    };
    const local = await startService({ env });
    let peer: ChildService;
    try {
      peer = await spawnService(env);
    } catch (error) {
      await local.stop();
      throw error;
    }
    return {
      local,
      remote: peer.base,
      async stop() {
        await local.stop();
        await peer.stop();
      },
    };
  });
});

describe('a stream opened with a mandate', () => {
  const clock = new ManualClock();
  const agentKey = signingKeyFromSeed(new Uint8Array(32).fill(11));
  const did = didKeyFromPublicKey(rawPublicKey(agentKey.publicKey));
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock, env: { MANDATE_ALLOW_SELF_ISSUED: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('ends at the first commit after the mandate expired', async () => {
    const nowS = Math.floor(clock.now() / 1000);
    const jws = signCompact(
      { alg: 'EdDSA', kid: did, typ: MANDATE_TYP },
      {
        iss: did,
        sub: did,
        jti: `urn:uuid:${randomUUID()}`,
        iat: nowS,
        exp: nowS + 120,
        svc: { rooms: ['*'], actions: ['member_join_request', 'discuss'] },
      },
      agentKey,
    );
    const created = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Mandated stream' } });
    const { slug, creator_token: creator } = created.body;
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: {}, headers: { 'x-mandate': jws } });
    expect(joined.status).toBe(200);
    const stream = await openSse(`${svc.base}/api/rooms/${slug}/events/stream`, { 'x-mandate': jws });
    expect(stream.status).toBe(200);
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: creator, body: { body: 'before expiry' } });
    await stream.waitFor(1);
    clock.advance(121_000);
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: creator, body: { body: 'after expiry' } });
    await eventually(() => stream.ended(), 1000);
    expect(stream.frames.filter((f) => f.data).map((f) => JSON.parse(f.data!).data.body)).toEqual(['before expiry']);
    expect(stream.frames.flatMap((f) => f.comments).at(-1)).toContain('mandate.expired');
  });
});
