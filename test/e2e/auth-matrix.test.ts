/**
 * The auth matrix: every room operation driven with each kind of wrong or limited credential — and
 * each kind of bad mandate — gets the protocol's status and code (01 §3–§5, §9, §10.3; 02 §4, §10;
 * 03 §7.3, §8; 08 §4.4), on REST and over MCP (where the operation has a tool).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  signCompact,
  signingKeyFromSeed,
} from '../../src/receipts/index.js';
import { rpc } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'a long room password';

type TokenCase = 'none' | 'other_room' | 'superseded' | 'observer' | 'not_eligible' | 'participant' | 'wrong_password';
type MandateCase =
  | 'expired'
  | 'not_yet_valid'
  | 'room_scope'
  | 'action_scope'
  | 'revoked'
  | 'bad_signature'
  | 'untrusted';
type Case = TokenCase | MandateCase;
type Kind = 'read' | 'seat' | 'ballot' | 'opening' | 'operator' | 'join';

interface Op {
  name: string;
  method: string;
  path: (slug: string) => string;
  body?: Record<string, unknown>;
  kind: Kind;
  /** MCP tool and catalog path, when the operation has one. */
  tool?: [string, '/mcp' | '/mcp/host'];
}

const OPS: Op[] = [
  { name: 'read', method: 'GET', path: (s) => `/api/rooms/${s}`, kind: 'read', tool: ['read_room', '/mcp'] },
  { name: 'read full', method: 'GET', path: (s) => `/api/rooms/${s}?include=full`, kind: 'read' },
  { name: 'delta', method: 'GET', path: (s) => `/api/rooms/${s}?since=0`, kind: 'read' },
  {
    name: 'decisions',
    method: 'GET',
    path: (s) => `/api/rooms/${s}/decisions`,
    kind: 'read',
    tool: ['list_decisions', '/mcp/host'],
  },
  { name: 'outcome', method: 'GET', path: (s) => `/api/rooms/${s}/outcome`, kind: 'read', tool: ['outcome', '/mcp'] },
  {
    name: 'discuss',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/discuss`,
    body: { body: 'hello' },
    kind: 'seat',
    tool: ['discuss', '/mcp'],
  },
  {
    name: 'options',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/options`,
    body: { option: 'new idea' },
    kind: 'seat',
    tool: ['propose', '/mcp'],
  },
  {
    name: 'choose',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/choose`,
    body: { choice: 'alpha' },
    kind: 'ballot',
    tool: ['choose', '/mcp'],
  },
  { name: 'GET choose', method: 'GET', path: (s) => `/api/rooms/${s}/choose?choice=alpha`, kind: 'ballot' },
  {
    name: 'abstain',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/abstain`,
    body: { reason: 'conflict' },
    kind: 'ballot',
    tool: ['abstain', '/mcp'],
  },
  {
    name: 'ask',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/ask`,
    body: { question: 'Another?', options: ['a', 'b'] },
    kind: 'opening',
    tool: ['ask', '/mcp/host'],
  },
  {
    name: 'start-choosing',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/start-choosing`,
    body: {},
    kind: 'opening',
    tool: ['start_choosing', '/mcp'],
  },
  {
    name: 'close',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/close`,
    body: {},
    kind: 'operator',
    tool: ['close_room', '/mcp/host'],
  },
  {
    name: 'create invite',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/invites`,
    body: { label: 'guest' },
    kind: 'operator',
    tool: ['invite_to_room', '/mcp/host'],
  },
  {
    name: 'list invites',
    method: 'GET',
    path: (s) => `/api/rooms/${s}/invites`,
    kind: 'operator',
    tool: ['list_invites', '/mcp/host'],
  },
  {
    name: 'revoke invite',
    method: 'DELETE',
    path: (s) => `/api/rooms/${s}/invites/nosuchcode12`,
    body: { code: 'nosuchcode12' },
    kind: 'operator',
    tool: ['revoke_invite', '/mcp/host'],
  },
  {
    name: 'member role',
    method: 'PATCH',
    path: (s) => `/api/rooms/${s}/members/observer`,
    body: { role: 'participant' },
    kind: 'operator',
  },
  {
    name: 'settings',
    method: 'PATCH',
    path: (s) => `/api/rooms/${s}/settings`,
    body: { settings: { settle_window: 5 } },
    kind: 'operator',
    tool: ['update_room_settings', '/mcp/host'],
  },
  { name: 'delete', method: 'DELETE', path: (s) => `/api/rooms/${s}`, kind: 'operator' },
  {
    name: 'join',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/join`,
    body: {},
    kind: 'join',
    tool: ['join_room', '/mcp'],
  },
];

const MANDATE_CODE: Record<MandateCase, string> = {
  expired: 'mandate.expired',
  not_yet_valid: 'mandate.not_yet_valid',
  room_scope: 'mandate.room_not_in_scope',
  action_scope: 'mandate.action_not_in_scope',
  revoked: 'mandate.revoked',
  bad_signature: 'mandate.signature_invalid',
  untrusted: 'mandate.issuer_untrusted',
};

/** The expected [status, code] for an operation kind under a case; null = success. */
function expected(op: Op, c: Case): [number, string] | null {
  const kind = op.kind;
  if (c in MANDATE_CODE) {
    const code = MANDATE_CODE[c as MandateCase];
    // The action-scoped mandate lists only `discuss`: reads, discussion and joins need no other action;
    // operator endpoints need no action but a mandate is never an operator credential.
    if (c !== 'action_scope') return [401, code];
    if (kind === 'read' || op.name === 'discuss' || kind === 'join') return null;
    if (kind === 'operator' && op.name !== 'close') return [403, 'authority.denied'];
    return [401, code];
  }
  if (c === 'other_room') return [401, 'auth.invalid_token'];
  if (c === 'superseded') return [401, 'participant.token_superseded'];
  if (c === 'wrong_password') {
    if (kind === 'read') return [401, 'auth.invalid_password'];
    return kind === 'join' ? [403, 'room.invite_required'] : [401, 'auth.required'];
  }
  if (c === 'none') {
    if (kind === 'read') return [403, 'room.join_required'];
    return kind === 'join' ? [403, 'room.invite_required'] : [401, 'auth.required'];
  }
  if (kind === 'read') return null;
  if (kind === 'join') return [403, 'room.invite_required'];
  if (c === 'observer') return [403, 'authority.denied'];
  if (kind === 'operator' || kind === 'opening') return [403, 'authority.denied'];
  if (kind === 'ballot' && c === 'not_eligible') return [403, 'choice.not_eligible'];
  return null;
}

const agentKey = signingKeyFromSeed(new Uint8Array(32).fill(3));
const strangerKey = signingKeyFromSeed(new Uint8Array(32).fill(4));
const did = didKeyFromPublicKey(rawPublicKey(agentKey.publicKey));

function mandate(
  iss: string,
  claims: Record<string, unknown> = {},
  svc: Record<string, unknown> = {},
  key = agentKey,
  kid = iss,
) {
  const now = Math.floor(Date.now() / 1000);
  const jti = `urn:uuid:${randomUUID()}`;
  const payload = {
    iss,
    sub: did,
    jti,
    exp: now + 3600,
    ...claims,
    svc: {
      rooms: ['*'],
      actions: ['member_join_request', 'choose', 'discuss', 'propose', 'ask', 'start_choosing', 'close'],
      ...svc,
    },
  };
  return { jti, jws: signCompact({ alg: 'EdDSA', kid, typ: MANDATE_TYP }, payload, key) };
}

describe('auth matrix over REST and MCP', () => {
  let svc: RunningService;
  let issuer: Server;
  let slug: string;
  const tokens: Partial<Record<TokenCase, string>> = {};
  const mandates: Partial<Record<MandateCase, string>> = {};
  let cells = 0;

  beforeAll(async () => {
    const revocations: { jti: string; revoked_at: string }[] = [];
    issuer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [agentKey.jwk], revocations }));
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(issuer.address() as { port: number }).port}`;
    // An allowlist makes "untrusted" a local decision: no lookup of the unknown issuer ever leaves the machine.
    svc = await startService({
      env: {
        MANDATE_ISSUER_ALLOW_PRIVATE: 'true',
        MANDATE_ISSUER_ALLOWLIST: origin,
        MANDATE_ALLOW_SELF_ISSUED: 'true',
        // Every operation is tried with a wrong password from one address: guessing is not the subject.
        GUESS_LIMIT_PER_MIN: '0',
      },
    });
    const { base } = svc;
    const room = (
      await call(base, 'POST', '/api/rooms', {
        body: {
          question: 'Matrix?',
          options: ['alpha', 'beta'],
          password: PASSWORD,
          config: { decision_opening_authority: { kind: 'operator' }, max_open_decisions: 2 },
        },
      })
    ).body;
    slug = room.slug;
    const join = async (label: string, role = 'participant', headers: Record<string, string> = {}) => {
      const invite = await call(base, 'POST', `/api/rooms/${slug}/invites`, {
        token: room.creator_token,
        body: { label, role },
      });
      const joined = await call(base, 'POST', `/api/rooms/${slug}/join`, {
        body: { invite: invite.body.invite_token },
        headers,
      });
      return { token: invite.body.invite_token as string, joined: joined.body };
    };
    const eligible = await join('eligible');
    const observer = await join('observer', 'observer');
    const recovered = await join('recovered');
    await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { invite: recovered.token } });
    // The mandate agent holds a seat, so only the mandate itself can fail.
    await join('agent', 'participant', { 'x-mandate': mandate(did).jws });
    // A second decision whose electorate excludes `late`, who joins after it opened.
    await call(base, 'POST', `/api/rooms/${slug}/ask`, {
      token: room.creator_token,
      body: { question: 'Narrow?', options: ['alpha', 'beta'], eligible: ['eligible'] },
    });
    const late = await join('late');
    const other = (await call(base, 'POST', '/api/rooms', { body: { about: 'elsewhere' } })).body;
    tokens.participant = eligible.joined.participant_token;
    tokens.observer = observer.joined.participant_token;
    tokens.superseded = recovered.joined.participant_token;
    tokens.not_eligible = late.joined.participant_token;
    tokens.other_room = other.creator_token;

    const now = Math.floor(Date.now() / 1000);
    const revoked = mandate(origin, {}, {}, agentKey, agentKey.kid);
    revocations.push({ jti: revoked.jti, revoked_at: new Date().toISOString() });
    mandates.expired = mandate(did, { exp: now - 5 }).jws;
    mandates.not_yet_valid = mandate(did, { nbf: now + 600 }).jws;
    mandates.room_scope = mandate(did, {}, { rooms: ['anotherroom'] }).jws;
    mandates.action_scope = mandate(did, {}, { actions: ['discuss'] }).jws;
    mandates.revoked = revoked.jws;
    mandates.bad_signature = mandate(did, {}, {}, strangerKey).jws;
    mandates.untrusted = mandate('https://issuer.invalid', {}, {}, agentKey, agentKey.kid).jws;
  });
  afterAll(async () => {
    console.log(`auth matrix: ${cells} cells checked (REST + MCP)`);
    await svc.stop();
    await new Promise((resolve) => issuer.close(resolve));
  });

  function request(op: Op, c: Case) {
    const headers: Record<string, string> = {};
    if (c === 'wrong_password') headers['x-room-password'] = 'not the password at all';
    if (c in MANDATE_CODE) headers['x-mandate'] = mandates[c as MandateCase]!;
    const narrow = op.kind === 'ballot' && c === 'not_eligible';
    const body = narrow && op.body ? { ...op.body, decision: 2 } : op.body;
    const path = narrow && op.method === 'GET' ? `${op.path(slug)}&decision=2` : op.path(slug);
    return { headers, body, path, token: tokens[c as TokenCase] };
  }

  const cases: Case[] = [
    'none',
    'other_room',
    'superseded',
    'observer',
    'not_eligible',
    'participant',
    'wrong_password',
    ...(Object.keys(MANDATE_CODE) as MandateCase[]),
  ];

  for (const c of cases) {
    it(`${c}: every operation answers as the protocol says`, async () => {
      for (const op of OPS) {
        const want = expected(op, c);
        if (op.name === 'delete' && want === null) continue;
        const { headers, body, path, token } = request(op, c);
        const res = await call(svc.base, op.method, path, {
          token,
          body: op.method === 'GET' || op.method === 'DELETE' ? undefined : body,
          headers,
        });
        cells++;
        if (want === null) {
          expect([401, 403], `REST ${c} ${op.name}: ${res.text}`).not.toContain(res.status);
          expect(res.status, `REST ${c} ${op.name}: ${res.text}`).toBeLessThan(500);
        } else {
          expect([res.status, res.body?.error?.code], `REST ${c} ${op.name}`).toEqual(want);
          expect(res.text).not.toContain('Matrix?');
        }
        if (!op.tool) continue;
        const [tool, endpoint] = op.tool;
        const args: Record<string, unknown> = { slug, ...(body ?? {}) };
        if (op.name === 'read full') args.include = 'full';
        if (token) args.token = token;
        if (c === 'wrong_password' && op.kind === 'read') args.password = 'not the password at all';
        const mandateMeta = headers['x-mandate'] ? { _meta: { mandate: headers['x-mandate'] } } : {};
        const mcp = await rpc(
          `${svc.base}${endpoint}`,
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: tool, arguments: args, ...mandateMeta },
          }),
          { 'mcp-protocol-version': '2025-11-25' },
        );
        cells++;
        const result = mcp.json?.result;
        if (want === null) {
          const code = result?.structuredContent?.error?.code;
          expect(
            ['auth.required', 'auth.invalid_token', 'authority.denied', 'room.join_required'],
            `MCP ${c} ${tool}: ${mcp.text}`,
          ).not.toContain(code);
        } else {
          expect(result?.isError, `MCP ${c} ${tool}: ${mcp.text}`).toBe(true);
          expect(result.structuredContent.error.code, `MCP ${c} ${tool}`).toBe(want[1]);
        }
      }
    });
  }
});
