/**
 * Nothing silently dropped (docs/agents.md, The REST loop): every act refuses a misspelt key with input.invalid
 * naming it and the key it most likely meant, over REST and over MCP (the official SDK client), while
 * what the service's own clients send stays accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nearestKey } from '../../src/domain/unknown-keys.js';
import { seatedRoom } from '../support/engagement.js';
import { connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

let svc: RunningService;
beforeAll(async () => {
  svc = await startService({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await svc.stop();
});

function expectNamed(error: any, key: string, meant: string): void {
  expect(error.code).toBe('input.invalid');
  expect(error.details.reason, JSON.stringify(error)).toBe('unknown_keys');
  expect(error.details.field).toBe(key);
  expect(error.details.allowed_keys).toContain(meant);
  expect(error.message).toContain(`"${key}" (did you mean "${meant}"?)`);
  expect(error.hint).toContain(`"${meant}" instead of "${key}"`);
}

describe('the nearest key', () => {
  it('is a slip of case, separator, a swap or a letter, and nothing when far', () => {
    const keys = ['body', 'stance', 'decision', 'display_name', 'event_types'];
    expect(nearestKey('stnace', keys)).toBe('stance');
    expect(nearestKey('displayName', keys)).toBe('display_name');
    expect(nearestKey('decison', keys)).toBe('decision');
    expect(nearestKey('event_type', keys)).toBe('event_types');
    expect(nearestKey('bdy', keys)).toBe('body');
    expect(nearestKey('colour', keys)).toBeUndefined();
  });
});

describe('REST acts refuse unknown keys', () => {
  it('names the key and the one it meant on every write, and the act does not happen', async () => {
    const { slug, tokens, ids } = await seatedRoom(svc.base, { question: 'Which?', options: ['a', 'b'] }, 3);
    const [host, member] = [tokens[0]!, tokens[1]!];
    const cases: [string, string, string | undefined, Record<string, unknown>, string, string][] = [
      ['POST', '/api/rooms', undefined, { question: 'Which one?', optoins: ['x', 'y'] }, 'optoins', 'options'],
      ['POST', `/api/rooms/${slug}/join`, undefined, { display_nmae: 'late' }, 'display_nmae', 'display_name'],
      ['POST', `/api/rooms/${slug}/discuss`, member, { body: 'hi', stnace: 'agree' }, 'stnace', 'stance'],
      ['POST', `/api/rooms/${slug}/options`, member, { option: 'c', decison: 1 }, 'decison', 'decision'],
      ['POST', `/api/rooms/${slug}/choose`, member, { choice: 'a', reasn: 'why' }, 'reasn', 'reason'],
      ['GET', `/api/rooms/${slug}/choose?choice=a&Reason=why`, member, {}, 'Reason', 'reason'],
      ['POST', `/api/rooms/${slug}/abstain`, member, { reason: 'no view', decison: 1 }, 'decison', 'decision'],
      ['POST', `/api/rooms/${slug}/ask`, host, { question: 'Next?', option: ['x', 'y'] }, 'option', 'options'],
      ['POST', `/api/rooms/${slug}/start-choosing`, host, { decisionId: 'x' }, 'decisionId', 'decision_id'],
      ['POST', `/api/rooms/${slug}/invites`, host, { label: 'guest', rol: 'observer' }, 'rol', 'role'],
      ['PATCH', `/api/rooms/${slug}/members/${ids[2]}`, host, { role: 'observer', rloe: 1 }, 'rloe', 'role'],
      ['PATCH', `/api/rooms/${slug}/settings`, host, { setting: { quorum: 2 } }, 'setting', 'settings'],
      [
        'POST',
        `/api/rooms/${slug}/webhooks`,
        host,
        { url: 'http://127.0.0.1:9/hook', event_type: ['decision.completed'] },
        'event_type',
        'event_types',
      ],
      ['POST', `/api/rooms/${slug}/close`, host, { statment: 'done' }, 'statment', 'statement'],
    ];
    for (const [method, url, token, body, key, meant] of cases) {
      const answer = await call(svc.base, method, url, { token, ...(method === 'GET' ? {} : { body }) });
      expect(answer.status, `${method} ${url}`).toBe(400);
      expectNamed(answer.body.error, key, meant);
    }
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token: host });
    expect(room.body.discussion).toEqual([]);
    expect(room.body.votes).toEqual([]);
    expect(room.body.status).toBe('voting');
    expect(room.body.participants.map((p: any) => p.role)).toEqual(['participant', 'participant', 'participant']);
  });

  it('still accepts what the room page, the CLI and the client send (including the path slug, and rationale)', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Which?', options: ['a', 'b'] }, 2);
    const said = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: tokens[1],
      body: { slug, body: 'hello', stance: 'agree', decision: 1 },
    });
    expect(said.status).toBe(200);
    const chose = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'a', decision: 1, rationale: 'cheaper' },
    });
    expect(chose.status).toBe(200);
  });

  it("ignores an unknown key that is nobody's misspelling, as the protocol says (forward compatibility)", async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Which?', options: ['a', 'b'] }, 2);
    const said = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: tokens[1],
      body: { body: 'hello', stance: 'agree', client_trace_id: 'abc-123' },
    });
    expect(said.status).toBe(200);
    const chose = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'a', confidence_from_a_later_version: 0.9 },
    });
    expect(chose.status).toBe(200);
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token: tokens[1] });
    expect(room.body.discussion.map((m: any) => [m.body, m.stance])).toEqual([['hello', 'agree']]);
  });
});

describe('MCP tools refuse unknown arguments', () => {
  let participant: McpSession;
  let host: McpSession;
  beforeAll(async () => {
    participant = await connectModern(`${svc.base}/mcp`);
    host = await connectModern(`${svc.base}/mcp/host`);
  });
  afterAll(async () => {
    await participant.close();
    await host.close();
  });

  it('names the argument and the one it meant on every act tool, as the tool spells its arguments', async () => {
    const created = await ok(host, 'create_room', { question: 'Which?', options: ['a', 'b'] });
    const slug = created.slug as string;
    const creator = created.creator_token as string;
    const joined = await ok(participant, 'join_room', { slug, display_name: 'member' });
    const token = joined.participant_token as string;
    const invited = await ok(host, 'invite_to_room', { slug, token: creator, label: 'guest' });
    const hook = await ok(host, 'register_webhook', { slug, token: creator, url: 'http://127.0.0.1:9/hook' });
    const cases: [McpSession, string, Record<string, unknown>, string, string][] = [
      [
        host,
        'create_room',
        { question: 'Which one?', defer_first_decison: true },
        'defer_first_decison',
        'defer_first_decision',
      ],
      [participant, 'join_room', { slug, displayname: 'late' }, 'displayname', 'display_name'],
      [participant, 'discuss', { slug, token, body: 'hi', stnace: 'agree' }, 'stnace', 'stance'],
      [participant, 'propose', { slug, token, option: 'c', decison: 1 }, 'decison', 'decision'],
      [participant, 'choose', { slug, token, choice: 'a', reasn: 'why' }, 'reasn', 'reason'],
      [participant, 'abstain', { slug, token, reason: 'no view', decison: 1 }, 'decison', 'decision'],
      [participant, 'ask', { slug, token: creator, question: 'Next?', option: ['x', 'y'] }, 'option', 'options'],
      [participant, 'start_choosing', { slug, token: creator, decisionId: 'x' }, 'decisionId', 'decision_id'],
      [participant, 'close_room', { slug, token: creator, statment: 'done' }, 'statment', 'statement'],
      [host, 'invite_to_room', { slug, token: creator, label: 'other', rol: 'observer' }, 'rol', 'role'],
      [host, 'revoke_invite', { slug, token: creator, code: invited.invite.code, tokn: 'x' }, 'tokn', 'token'],
      [host, 'update_room_settings', { slug, token: creator, setting: { quorum: 2 } }, 'setting', 'settings'],
      [
        host,
        'register_webhook',
        { slug, token: creator, url: 'http://127.0.0.1:9/2', event_type: [] },
        'event_type',
        'event_types',
      ],
      [host, 'unregister_webhook', { slug, token: creator, webhookId: hook.webhook_id }, 'webhookId', 'webhook_id'],
      [
        host,
        'ask',
        { slug, token: creator, question: 'Next?', idempotencykey: 'k1' },
        'idempotencykey',
        'idempotency_key',
      ],
    ];
    for (const [session, tool, args, key, meant] of cases) {
      const outcome = await session.call(tool, args);
      expect(outcome.isError, tool).toBe(true);
      expectNamed(outcome.body.error, key, meant);
    }
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token: creator });
    expect(room.body.discussion).toEqual([]);
    expect(room.body.status).toBe('voting');
    expect(room.body.invites[0].status).toBe('pending');
  });

  it("ignores an unknown argument that is nobody's misspelling", async () => {
    const created = await ok(host, 'create_room', { question: 'Which?', options: ['a', 'b'] });
    const slug = created.slug as string;
    const said = await participant.call('discuss', {
      slug,
      token: created.creator_token,
      body: 'hi',
      client_trace_id: 'abc-123',
    });
    expect(said.isError).toBeFalsy();
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, {
      token: created.creator_token as string,
    });
    expect(room.body.discussion.map((m: any) => m.body)).toEqual(['hi']);
  });
});
