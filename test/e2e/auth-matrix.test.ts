/**
 * The auth matrix: every room operation driven with each kind of wrong or limited credential gets
 * the protocol's status and code (01 §3–§5, §9; 02 §4, §10; 03 §7.3, §8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'a long room password';

type Case = 'none' | 'other_room' | 'superseded' | 'observer' | 'not_eligible' | 'participant' | 'wrong_password';

interface Op {
  name: string;
  method: string;
  path: (slug: string) => string;
  body?: unknown;
  kind: 'read' | 'seat' | 'ballot' | 'opening' | 'operator' | 'join';
}

const OPS: Op[] = [
  { name: 'read', method: 'GET', path: (s) => `/api/rooms/${s}`, kind: 'read' },
  { name: 'read full', method: 'GET', path: (s) => `/api/rooms/${s}?include=full`, kind: 'read' },
  { name: 'delta', method: 'GET', path: (s) => `/api/rooms/${s}?since=0`, kind: 'read' },
  { name: 'decisions', method: 'GET', path: (s) => `/api/rooms/${s}/decisions`, kind: 'read' },
  { name: 'outcome', method: 'GET', path: (s) => `/api/rooms/${s}/outcome`, kind: 'read' },
  { name: 'discuss', method: 'POST', path: (s) => `/api/rooms/${s}/discuss`, body: { body: 'hello' }, kind: 'seat' },
  {
    name: 'options',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/options`,
    body: { option: 'new idea' },
    kind: 'seat',
  },
  { name: 'choose', method: 'POST', path: (s) => `/api/rooms/${s}/choose`, body: { choice: 'alpha' }, kind: 'ballot' },
  { name: 'GET choose', method: 'GET', path: (s) => `/api/rooms/${s}/choose?choice=alpha`, kind: 'ballot' },
  {
    name: 'abstain',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/abstain`,
    body: { reason: 'conflict' },
    kind: 'ballot',
  },
  {
    name: 'ask',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/ask`,
    body: { question: 'Another?', options: ['a', 'b'] },
    kind: 'opening',
  },
  { name: 'start-choosing', method: 'POST', path: (s) => `/api/rooms/${s}/start-choosing`, body: {}, kind: 'opening' },
  { name: 'close', method: 'POST', path: (s) => `/api/rooms/${s}/close`, body: {}, kind: 'operator' },
  {
    name: 'create invite',
    method: 'POST',
    path: (s) => `/api/rooms/${s}/invites`,
    body: { label: 'guest' },
    kind: 'operator',
  },
  { name: 'list invites', method: 'GET', path: (s) => `/api/rooms/${s}/invites`, kind: 'operator' },
  { name: 'revoke invite', method: 'DELETE', path: (s) => `/api/rooms/${s}/invites/nosuchcode12`, kind: 'operator' },
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
  },
  { name: 'delete', method: 'DELETE', path: (s) => `/api/rooms/${s}`, kind: 'operator' },
  { name: 'join', method: 'POST', path: (s) => `/api/rooms/${s}/join`, body: {}, kind: 'join' },
];

/** The expected [status, code] for an operation kind under a credential case; null = success. */
function expected(kind: Op['kind'], c: Case): [number, string] | null {
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

describe('auth matrix over REST', () => {
  let svc: RunningService;
  let slug: string;
  const tokens: Partial<Record<Case, string>> = {};
  const results: string[] = [];

  beforeAll(async () => {
    svc = await startService();
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
    const join = async (label: string, role = 'participant') => {
      const invite = await call(base, 'POST', `/api/rooms/${slug}/invites`, {
        token: room.creator_token,
        body: { label, role },
      });
      return {
        token: invite.body.invite_token as string,
        joined: (await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { invite: invite.body.invite_token } }))
          .body,
      };
    };
    const eligible = await join('eligible');
    const observer = await join('observer', 'observer');
    const recovered = await join('recovered');
    await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { invite: recovered.token } });
    // a second decision whose electorate excludes `late`, who joins after it opened
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
  });
  afterAll(async () => {
    console.log(`auth matrix: ${results.length} cells checked`);
    await svc.stop();
  });

  const cases: Case[] = [
    'none',
    'other_room',
    'superseded',
    'observer',
    'not_eligible',
    'participant',
    'wrong_password',
  ];
  for (const c of cases) {
    it(`${c}: every operation answers as the protocol says`, async () => {
      for (const op of OPS) {
        if (op.name === 'delete' && expected(op.kind, c) === null) continue;
        const headers: Record<string, string> =
          c === 'wrong_password' ? { 'x-room-password': 'not the password at all' } : {};
        const body =
          op.kind === 'ballot' && c === 'not_eligible' && op.body ? { ...(op.body as object), decision: 2 } : op.body;
        const path =
          op.kind === 'ballot' && c === 'not_eligible' && op.method === 'GET'
            ? `${op.path(slug)}&decision=2`
            : op.path(slug);
        const res = await call(svc.base, op.method, path, { token: tokens[c], body, headers });
        const want = expected(op.kind, c);
        results.push(`${c} ${op.name}`);
        if (want === null) {
          expect(res.status, `${c} ${op.name}: ${res.text}`).toBeLessThan(500);
          expect([401, 403], `${c} ${op.name}: ${res.text}`).not.toContain(res.status);
        } else {
          expect([res.status, res.body?.error?.code], `${c} ${op.name}`).toEqual(want);
          expect(res.text).not.toContain('Matrix?');
        }
      }
    });
  }
});
