/**
 * Mandates end to end over real HTTP: a did:key agent takes part in a mandate-only room with no
 * token and is recorded in the receipt; every verification failure gets its own code, on REST and
 * over MCP (`_meta.mandate`); an HTTPS issuer on loopback publishes keys and revocations.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  type SigningKey,
  signCompact,
  signingKeyFromSeed,
} from '../../src/receipts/index.js';
import { listRoomsOverMcp, rpc } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const agentKey = signingKeyFromSeed(new Uint8Array(32).fill(7));
const otherKey = signingKeyFromSeed(new Uint8Array(32).fill(9));
const did = didKeyFromPublicKey(rawPublicKey(agentKey.publicKey));
const nowS = () => Math.floor(Date.now() / 1000);

function mint(
  key: SigningKey,
  iss: string,
  svc: Record<string, unknown>,
  claims: Record<string, unknown> = {},
  kid: string = iss,
): { jws: string; jti: string } {
  const jti = `urn:uuid:${randomUUID()}`;
  const payload = {
    iss,
    sub: did,
    jti,
    iat: nowS(),
    exp: nowS() + 3600,
    svc: { rooms: ['*'], actions: ['member_join_request', 'choose', 'discuss', 'propose'], ...svc },
    ...claims,
  };
  return { jws: signCompact({ alg: 'EdDSA', kid, typ: MANDATE_TYP }, payload, key), jti };
}

const selfIssued = (svc: Record<string, unknown> = {}, claims: Record<string, unknown> = {}) =>
  mint(agentKey, did, svc, claims);

describe('mandates over REST and MCP', () => {
  let svc: RunningService;
  let issuer: Server;
  let issuerOrigin = '';
  const revoked: { jti: string; revoked_at: string }[] = [];

  beforeAll(async () => {
    issuer = createServer((request, response) => {
      if (request.url !== '/.well-known/svc.json') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' });
      response.end(JSON.stringify({ keys: [{ ...agentKey.jwk }], revocations: revoked }));
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    issuerOrigin = `http://127.0.0.1:${(issuer.address() as { port: number }).port}`;
    // An allowlist makes "untrusted" a local decision: no lookup of the unknown issuer ever leaves the machine.
    svc = await startService({
      env: {
        MANDATE_ISSUER_ALLOW_PRIVATE: 'true',
        MANDATE_ISSUER_ALLOWLIST: issuerOrigin,
        MANDATE_ALLOW_SELF_ISSUED: 'true',
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
    await new Promise((resolve) => issuer.close(resolve));
  });

  it('lets a did:key agent join, act, wait and read the outcome in a mandate_required room', async () => {
    const { base } = svc;
    const room = (
      await call(base, 'POST', '/api/rooms', {
        body: {
          question: 'Mandated?',
          options: ['yes', 'no'],
          config: { auth: 'mandate_required', early_close: true, settle_window: 0, creator_votes: false },
        },
      })
    ).body;
    const { jws, jti } = selfIssued();
    const headers = { 'x-mandate': jws };
    const noCredential = await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {} });
    expect([noCredential.status, noCredential.body.error.code]).toEqual([401, 'auth.mandate_required']);
    const joined = await call(base, 'POST', `/api/rooms/${room.slug}/join`, {
      body: { display_name: 'agent' },
      headers,
    });
    expect(joined.body).toMatchObject({ participant_token: null, agent_did: did, display_name: 'agent' });
    const again = await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, headers });
    expect(again.body.participant_id).toBe(joined.body.participant_id);

    const said = await call(base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      body: { body: 'signed by my principal' },
      headers,
    });
    expect(said.status).toBe(200);
    const creatorSeatAct = await call(base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: room.creator_token,
      body: { body: 'token only' },
    });
    expect([creatorSeatAct.status, creatorSeatAct.body.error.code]).toEqual([401, 'auth.mandate_required']);
    const operatorAct = await call(base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: room.creator_token,
      body: { settings: { settle_window: 0 } },
    });
    expect(operatorAct.status).toBe(200);

    const waited = await call(base, 'GET', `/api/rooms/${room.slug}/next-action?wait=0`, { headers });
    expect(waited.body.status).toBe('actionable');
    const chosen = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { body: { choice: 'yes' }, headers });
    expect(chosen.body).toMatchObject({ status: 'resolved', resolved_winner: 'yes' });
    const outcome = await call(base, 'GET', `/api/rooms/${room.slug}/outcome`, { headers });
    const payload = JSON.parse(Buffer.from(outcome.body.receipt_jws.split('.')[1], 'base64url').toString());
    expect(payload.svc.votes).toEqual([expect.objectContaining({ agent_id: did, mandate_ref: jti, choice: 'yes' })]);
    const full = await call(base, 'GET', `/api/rooms/${room.slug}?include=full`, { headers });
    expect(full.body.participants.find((p: any) => p.agent_did === did)).toMatchObject({ mandate_id: jti });
  });

  it('refuses a mandate in a token-only room and accepts one in an either room', async () => {
    const { base } = svc;
    const tokenOnly = (
      await call(base, 'POST', '/api/rooms', {
        body: { about: 'tokens', config: { auth: 'token_only', visibility: 'public' } },
      })
    ).body;
    const refused = await call(base, 'POST', `/api/rooms/${tokenOnly.slug}/join`, {
      body: {},
      headers: { 'x-mandate': selfIssued().jws },
    });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'auth.mandate_not_accepted']);
    const either = (await call(base, 'POST', '/api/rooms', { body: { about: 'both' } })).body;
    const ok = await call(base, 'POST', `/api/rooms/${either.slug}/join`, {
      body: {},
      headers: { 'x-mandate': selfIssued().jws },
    });
    expect(ok.status).toBe(200);
  });

  it('reports each verification failure with its code, on REST and over MCP', async () => {
    const { base } = svc;
    const room = (await call(base, 'POST', '/api/rooms', { body: { question: 'Checks?', options: ['a', 'b'] } })).body;
    await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, headers: { 'x-mandate': selfIssued().jws } });
    const toRevoke = mint(agentKey, issuerOrigin, {}, {}, agentKey.kid);
    revoked.push({ jti: toRevoke.jti, revoked_at: new Date().toISOString() });
    const cases: [string, string, string][] = [
      ['malformed', 'not.a.mandate', 'mandate.malformed'],
      ['expired', selfIssued({}, { exp: nowS() - 10 }).jws, 'mandate.expired'],
      ['not yet valid', selfIssued({}, { nbf: nowS() + 600 }).jws, 'mandate.not_yet_valid'],
      ['room out of scope', selfIssued({ rooms: ['someotherroom'] }).jws, 'mandate.room_not_in_scope'],
      ['action out of scope', selfIssued({ actions: ['discuss'] }).jws, 'mandate.action_not_in_scope'],
      ['badly signed', mint(otherKey, did, {}).jws, 'mandate.signature_invalid'],
      [
        'untrusted issuer',
        mint(agentKey, 'https://issuer.invalid', {}, {}, agentKey.kid).jws,
        'mandate.issuer_untrusted',
      ],
      ['revoked', toRevoke.jws, 'mandate.revoked'],
    ];
    for (const [name, jws, code] of cases) {
      const rest = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, {
        body: { choice: 'a' },
        headers: { 'x-mandate': jws },
      });
      expect([rest.status, rest.body.error.code], `REST ${name}`).toEqual([401, code]);
      const mcp = await rpc(
        `${base}/mcp`,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'choose', arguments: { slug: room.slug, choice: 'a' }, _meta: { mandate: jws } },
        }),
        { 'mcp-protocol-version': '2025-11-25' },
      );
      expect(mcp.json?.result?.isError, `MCP ${name}: ${mcp.text}`).toBe(true);
      expect(mcp.json.result.structuredContent.error.code, `MCP ${name}`).toBe(code);
    }
    // Counted per (iss, sub, room): the join and one message fill a cap of 2 in a fresh room.
    const capped = selfIssued({ rate_caps: { limit: 2, window_seconds: 60 } }).jws;
    const fresh = (await call(base, 'POST', '/api/rooms', { body: { about: 'rate caps' } })).body;
    expect(
      (await call(base, 'POST', `/api/rooms/${fresh.slug}/join`, { body: {}, headers: { 'x-mandate': capped } }))
        .status,
    ).toBe(200);
    expect(
      (
        await call(base, 'POST', `/api/rooms/${fresh.slug}/discuss`, {
          body: { body: 'one' },
          headers: { 'x-mandate': capped },
        })
      ).status,
    ).toBe(200);
    const second = await call(base, 'POST', `/api/rooms/${fresh.slug}/discuss`, {
      body: { body: 'two' },
      headers: { 'x-mandate': capped },
    });
    expect([second.status, second.body.error.code]).toEqual([401, 'mandate.rate_cap_exceeded']);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const operatorOnly = await call(base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      body: { settings: { settle_window: 1 } },
      headers: { 'x-mandate': selfIssued().jws },
    });
    expect([operatorOnly.status, operatorOnly.body.error.code]).toEqual([403, 'authority.denied']);
  });

  it('lists the rooms a mandate subject or a token holds seats in (MCP list_rooms)', async () => {
    const { base } = svc;
    const listRooms = (args: Record<string, unknown>, meta?: Record<string, unknown>) =>
      listRoomsOverMcp(base, args, meta);
    const older = (await call(base, 'POST', '/api/rooms', { body: { about: 'older room' } })).body;
    const newer = (await call(base, 'POST', '/api/rooms', { body: { about: 'newer room' } })).body;
    const lister = mint(agentKey, did, {}, { sub: 'did:example:lister' });
    for (const room of [older, newer]) {
      await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, headers: { 'x-mandate': lister.jws } });
    }
    const byMandate = await listRooms({}, { mandate: lister.jws });
    expect(byMandate.rooms.map((r: any) => r.slug)).toEqual([newer.slug, older.slug]);
    expect(byMandate.rooms[0]).toMatchObject({
      about: 'newer room',
      role: 'participant',
      url: `${base}/r/${newer.slug}`,
    });
    const byToken = await listRooms({ token: older.creator_token });
    expect(byToken.rooms.map((r: any) => r.slug)).toEqual([older.slug]);
    const none = await listRooms({});
    expect(none.error.code).toBe('auth.required');
  });

  it('caps quadratic credits by the mandate weight_cap', async () => {
    const { base } = svc;
    const room = (
      await call(base, 'POST', '/api/rooms', {
        body: { question: 'Spend?', options: ['a', 'b'], config: { mechanism: 'quadratic_vote' } },
      })
    ).body;
    const capped = selfIssued({ weight_cap: 4 }).jws;
    await call(base, 'POST', `/api/rooms/${room.slug}/join`, { body: {}, headers: { 'x-mandate': capped } });
    const over = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, {
      body: { choice: { a: 5 } },
      headers: { 'x-mandate': capped },
    });
    expect([over.status, over.body.error.code, over.body.error.details]).toEqual([
      401,
      'mandate.weight_cap_exceeded',
      { check: 'weight', weight_cap: 4, requested: 5 },
    ]);
    // The same credits as a scores list weigh the same (docs/agents.md, One ballot, every framework).
    const listed = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, {
      body: {
        scores: [
          { option: 'a', points: 3 },
          { option: 'b', points: 2 },
        ],
      },
      headers: { 'x-mandate': capped },
    });
    expect([listed.status, listed.body.error.code, listed.body.error.details]).toEqual([
      401,
      'mandate.weight_cap_exceeded',
      { check: 'weight', weight_cap: 4, requested: 5 },
    ]);
    const within = await call(base, 'POST', `/api/rooms/${room.slug}/choose`, {
      body: { choice: { a: 4 } },
      headers: { 'x-mandate': capped },
    });
    expect(within.status).toBe(200);
  });
});
