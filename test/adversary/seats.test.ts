/**
 * Seats by issuer and subject (docs/architecture.md, Credentials): a mandate seat is (room, issuer,
 * sub), so an issuer that names a subject first never locks the subject's own issuer out. The attack:
 * a squatter reads a subject (an HTTPS-issued subject, or a `urn:` id) from a receipt and joins a room
 * with it before the real agent; the real agent's issuer then joins and votes as that subject. Both
 * seats vote, each mandate reaches only its own issuer's seat, and the signed receipt, the client
 * verifier and `conclave verify` tell the two ballots apart by issuer; the receipt replays. Also: a
 * mandate naming a token seat's `participant:<id>` (the receipts' name for token ballots) is refused,
 * so it can never pass for, or be counted as, that seat. Real HTTP, a loopback issuer serving its
 * keys, SQLite and Redis.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatChainReport } from '../../src/cli/report.js';
import { verifyRoomReceiptChain } from '../../src/client/verify.js';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  type SigningKey,
  signCompact,
  signingKeyFromSeed,
} from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { listRoomsByMandate } from '../support/mcp-clients.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const ACTIONS = ['member_join_request', 'choose', 'discuss'];

const freshKey = (): SigningKey => signingKeyFromSeed(new Uint8Array(randomBytes(32)));
const didOf = (key: SigningKey): string => didKeyFromPublicKey(rawPublicKey(key.publicKey));

/** A mandate for `sub`, signed by `key` as issuer `iss` (a did:key, or the loopback issuer's origin). */
function mint(clock: ManualClock, key: SigningKey, iss: string, sub: string): { jws: string; jti: string } {
  const iat = Math.floor(clock.now() / 1000);
  const jti = `urn:uuid:${randomUUID()}`;
  const kid = iss.startsWith('did:key:') ? iss : key.kid;
  const payload = { iss, sub, jti, iat, exp: iat + 3600, svc: { rooms: ['*'], actions: ACTIONS } };
  return { jws: signCompact({ alg: 'EdDSA', kid, typ: MANDATE_TYP }, payload, key), jti };
}

const as = (mandate: { jws: string }) => ({ headers: { 'x-mandate': mandate.jws } });

async function listRooms(base: string, mandate: { jws: string }): Promise<string[]> {
  return listRoomsByMandate(base, mandate.jws);
}

/** A room whose decision resolves once its three voters have chosen (majority of three). */
async function threeVoterRoom(base: string): Promise<{ slug: string; creator_token: string; voter: string }> {
  const created = await call(base, 'POST', '/api/rooms', {
    body: {
      question: 'Whose seat is it?',
      options: ['a', 'b'],
      config: { early_close: true, settle_window: 0, creator_votes: false },
    },
  });
  expect(created.status).toBe(200);
  const voter = await call(base, 'POST', `/api/rooms/${created.body.slug}/join`, { body: { display_name: 'voter' } });
  expect(voter.status).toBe(200);
  return { ...created.body, voter: voter.body.participant_token };
}

const redis: TestRedisServer | null = await startRedisServer();
const STORES: { store: string; env: () => Record<string, string> }[] = [
  { store: 'SQLite', env: () => ({}) },
  {
    store: 'Redis',
    env: () => {
      if (!redis) throw new Error('redis-server is required for the Redis seat attacks');
      return { STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: `seats-${randomUUID().slice(0, 8)}:` };
    },
  },
];

let issuer: Server;
let issuerOrigin = '';
const issuerKey = freshKey();

beforeAll(async () => {
  // The subject's own issuer: an HTTP(S) origin on loopback serving its keys, as any issuer does.
  issuer = createServer((request, response) => {
    if (request.url !== '/.well-known/svc.json') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' });
    response.end(JSON.stringify({ keys: [{ ...issuerKey.jwk }], revocations: [] }));
  });
  await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
  issuerOrigin = `http://127.0.0.1:${(issuer.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => issuer?.close(resolve));
  await redis?.stop();
});

describe.each(STORES)('seats by issuer and subject on $store', ({ store, env }) => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  const skip = () => store === 'Redis' && !redis && process.env.CI !== 'true';

  beforeAll(async () => {
    if (skip()) return;
    svc = await startService({
      clock,
      env: {
        MANDATE_ISSUER_ALLOW_PRIVATE: 'true',
        MANDATE_ISSUER_ALLOWLIST: issuerOrigin,
        MANDATE_ALLOW_SELF_ISSUED: 'true',
        ...env(),
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /**
   * The squatter (a did:key issuer) joins with `sub` and chooses b; then the rightful issuer joins with
   * the same `sub` and chooses a; a token voter chooses a. Returns what the room and its receipt show.
   */
  async function squat(sub: string, rightful: { key: SigningKey; iss: string }) {
    const { base } = svc;
    const room = await threeVoterRoom(base);
    const squatterKey = freshKey();
    const squatterIss = didOf(squatterKey);
    const squat = mint(clock, squatterKey, squatterIss, sub);
    const squatted = await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, ...as(squat) });
    expect(squatted.status).toBe(200);
    expect(
      (await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { body: { choice: 'b' }, ...as(squat) })).status,
    ).toBe(200);

    // The subject's own issuer arrives later: it takes a seat of its own, with any of its mandates.
    const own = mint(clock, rightful.key, rightful.iss, sub);
    const joined = await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, ...as(own) });
    expect(joined.status, joined.text).toBe(200);
    expect(joined.body).toMatchObject({ agent_did: sub, participant_token: null });
    expect(joined.body.participant_id).not.toBe(squatted.body.participant_id);
    const later = mint(clock, rightful.key, rightful.iss, sub);
    const read = await call(base, 'GET', `/api/rooms/${room.slug}`, as(later));
    expect(read.status, read.text).toBe(200);
    expect(read.body.role).toBe('participant');

    // Each issuer's mandates reach its own seat and never the other's: the squatter's seat has chosen,
    // the rightful seat has not.
    const squatterAgain = mint(clock, squatterKey, squatterIss, sub);
    const theirs = await call(base, 'GET', `/api/rooms/${room.slug}`, as(squatterAgain));
    expect(theirs.status).toBe(200);
    expect(theirs.body.brief).not.toContain('You have not chosen yet.');
    expect(read.body.brief).toContain('You have not chosen yet.');
    const rejoined = await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, ...as(squatterAgain) });
    expect(rejoined.body.participant_id).toBe(squatted.body.participant_id);
    expect(await listRooms(base, later)).toEqual([room.slug]);
    expect(await listRooms(base, squatterAgain)).toEqual([room.slug]);

    const full = await call(base, 'GET', `/api/rooms/${room.slug}?include=full`, { token: room.creator_token });
    const seats = full.body.participants.filter((p: { agent_did: string | null }) => p.agent_did === sub);
    expect(seats.map((p: { agent_iss: string }) => p.agent_iss).sort()).toEqual([rightful.iss, squatterIss].sort());

    const chose = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { body: { choice: 'a' }, ...as(later) });
    expect(chose.status).toBe(200);
    const last = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, {
      body: { choice: 'a' },
      token: room.voter,
    });
    expect(last.body).toMatchObject({ status: 'resolved', resolved_winner: 'a' });

    const outcome = await call(base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.creator_token });
    const payload = JSON.parse(Buffer.from(outcome.body.receipt_jws.split('.')[1], 'base64url').toString());
    // Both subject ballots count: the tally is 2 to 1, not a merge of one voter's two ballots.
    expect(payload.svc.outcome.tallies).toEqual({ a: 2, b: 1 });
    expect(payload.svc.outcome.diagnostics).toEqual({ cast_votes: 3, eligible_voters: 3 });
    const jwks = await call(base, 'GET', '/.well-known/jwks.json');
    const report = await verifyRoomReceiptChain(outcome.body, { jwks: jwks.body, room: `${base}/r/${room.slug}` });
    expect(report.errors).toEqual([]);
    expect(report.receipts[0]!.replay).toBe(true);
    const mandateBallots = report.receipts[0]!.ballots.filter((b) => b.mandate_ref !== null);
    expect(mandateBallots).toEqual(
      expect.arrayContaining([
        { agent_id: sub, agent_iss: squatterIss, mandate_ref: squat.jti },
        { agent_id: sub, agent_iss: rightful.iss, mandate_ref: later.jti },
      ]),
    );
    expect(mandateBallots).toHaveLength(2);
    const printed = formatChainReport(report, room.slug);
    expect(printed).toContain(`ballot of ${sub}, issued by ${squatterIss} (mandate ${squat.jti})`);
    expect(printed).toContain(`ballot of ${sub}, issued by ${rightful.iss} (mandate ${later.jti})`);
    return { payload, squatterIss };
  }

  it("an HTTPS issuer's own subject, squatted by a did:key issuer first, joins, reads and votes as itself", async (t) => {
    if (skip()) t.skip();
    const sub = `${issuerOrigin}/agents/planner`;
    const { payload, squatterIss } = await squat(sub, { key: issuerKey, iss: issuerOrigin });
    const choices = Object.fromEntries(
      payload.svc.votes
        .filter((v: { agent_id: string }) => v.agent_id === sub)
        .map((v: { agent_iss: string; choice: string }) => [v.agent_iss, v.choice]),
    );
    expect(choices).toEqual({ [squatterIss]: 'b', [issuerOrigin]: 'a' });
  });

  it('a urn: subject named by two issuers is two seats, two voters, told apart by issuer', async (t) => {
    if (skip()) t.skip();
    const otherKey = freshKey();
    await squat(`urn:example:agent:${randomUUID()}`, { key: otherKey, iss: didOf(otherKey) });
  });

  it("refuses a mandate naming a token seat's participant:<id>, so it can neither pass for nor replace that ballot", async (t) => {
    if (skip()) t.skip();
    const { base } = svc;
    const room = await threeVoterRoom(base);
    const full = await call(base, 'GET', `/api/rooms/${room.slug}?include=full`, { token: room.creator_token });
    const victim = full.body.participants.find((p: { display_name: string }) => p.display_name === 'voter');
    const key = freshKey();
    const forged = mint(clock, key, didOf(key), `participant:${victim.participant_id}`);
    for (const [method, url] of [
      ['POST', `/api/rooms/${room.slug}/join`],
      ['GET', `/api/rooms/${room.slug}`],
    ] as const) {
      const res = await call(base, method, url, { ...as(forged), ...(method === 'POST' ? { body: {} } : {}) });
      expect([res.status, res.body.error.code], `${method} ${url}`).toEqual([401, 'mandate.malformed']);
      expect(res.body.error.message).toMatch(/participant:/);
    }
  });
});
