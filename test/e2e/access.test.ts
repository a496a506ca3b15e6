/**
 * Access over real HTTP: the three visibility modes, passwords, invites and seat recovery, roles,
 * authorities, settings and capacity — every status and code of 02-rooms.md, and no leaks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'correct horse battery';

describe('visibility, invites, roles and settings', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  const post = (url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    call(svc.base, 'POST', url, { token, body, headers });

  it('walks the three visibility modes', async () => {
    const pub = (
      await post('/api/rooms', undefined, {
        question: 'Public question?',
        options: ['a', 'b'],
        config: { visibility: 'public' },
      })
    ).body;
    expect((await call(svc.base, 'GET', `/api/rooms/${pub.slug}`)).body.decision.question).toBe('Public question?');

    const priv = (
      await post('/api/rooms', undefined, { question: 'Private question?', options: ['a', 'b'], password: PASSWORD })
    ).body;
    expect(priv.config.visibility).toBe('private');
    const outsider = await call(svc.base, 'GET', `/api/rooms/${priv.slug}`);
    expect(outsider.status).toBe(403);
    expect(outsider.body.error.details).toEqual({
      slug: priv.slug,
      visibility: 'private',
      join_required: true,
      password_supported: true,
    });
    for (const text of ['Private question', '"a"', 'creator', 'voting']) expect(outsider.text).not.toContain(text);

    const pwRead = await call(svc.base, 'GET', `/api/rooms/${priv.slug}`, { headers: { 'x-room-password': PASSWORD } });
    expect(pwRead.status).toBe(200);
    expect(pwRead.body.role).toBe('observer');
    const wrongRead = await call(svc.base, 'GET', `/api/rooms/${priv.slug}/outcome`, {
      headers: { 'x-room-password': 'wrong password!!' },
    });
    expect(wrongRead.status).toBe(401);
    expect(wrongRead.body.error.code).toBe('auth.invalid_password');
    const pwAct = await post(
      `/api/rooms/${priv.slug}/discuss`,
      undefined,
      { body: 'hi' },
      { 'x-room-password': PASSWORD },
    );
    expect(pwAct.status).toBe(401);

    const noInvite = await post(`/api/rooms/${priv.slug}/join`, undefined, {});
    expect(noInvite.status).toBe(403);
    expect(noInvite.body.error.code).toBe('room.invite_required');
    expect(noInvite.body.error.details).toEqual({ slug: priv.slug, password_supported: true });
    const wrongPw = await post(`/api/rooms/${priv.slug}/join`, undefined, { password: 'not the password' });
    expect(wrongPw.status).toBe(401);
    expect(wrongPw.body.error.code).toBe('auth.invalid_password');
    const pwJoin = await post(`/api/rooms/${priv.slug}/join`, undefined, {
      password: PASSWORD,
      display_name: 'pw-joiner',
    });
    expect(pwJoin.status).toBe(200);

    const invite = await post(`/api/rooms/${priv.slug}/invites`, priv.creator_token, { label: 'carol' });
    expect(invite.status).toBe(200);
    const bypass = await post(`/api/rooms/${priv.slug}/join`, undefined, {
      invite: invite.body.invite_token,
      password: 'not the password',
    });
    expect(bypass.status).toBe(200);
    expect(bypass.body.display_name).toBe('carol');

    const removed = await post('/api/rooms', undefined, { about: 'x', config: { visibility: 'password' } });
    expect(removed.status).toBe(400);
    expect(removed.body.error.code).toBe('input.invalid');
  });

  it('recovers seats through accepted invites and supersedes the old token', async () => {
    const room = (
      await post('/api/rooms', undefined, {
        question: 'Recover?',
        options: ['a', 'b'],
        config: { visibility: 'private' },
      })
    ).body;
    const created = await post(`/api/rooms/${room.slug}/invites`, room.creator_token, {
      label: 'dana',
      role: 'participant',
      expected: true,
    });
    expect(created.body.invite_token).toMatch(/^it_/);
    expect(created.body.join_url).toBe(`${svc.base}/r/${room.slug}`);
    expect(created.body.paste_block.split('\n')).toHaveLength(6);
    expect(created.body.paste_block.split('\n')[2]).toBe('Your seat: dana (role: participant)');
    expect(created.body.paste_block.endsWith(created.body.join_command)).toBe(true);
    expect(created.body.join_command).toContain(created.body.invite_token);
    const token = created.body.invite_token;

    const first = await post(`/api/rooms/${room.slug}/join`, undefined, { invite: token });
    const second = await post(`/api/rooms/${room.slug}/join`, undefined, { invite: token });
    expect(second.body).toMatchObject({
      participant_id: first.body.participant_id,
      display_name: 'dana',
      recovered: true,
    });
    expect(second.body.participant_token).not.toBe(first.body.participant_token);
    const stale = await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: first.body.participant_token });
    expect(stale.status).toBe(401);
    expect(stale.body.error.code).toBe('participant.token_superseded');
    expect(stale.body.error.details).toEqual({ participant_id: first.body.participant_id });

    const revoked = await call(svc.base, 'DELETE', `/api/rooms/${room.slug}/invites/${created.body.invite.code}`, {
      token: room.creator_token,
    });
    expect(revoked.body.invite.status).toBe('revoked');
    const again = await call(svc.base, 'DELETE', `/api/rooms/${room.slug}/invites/${created.body.invite.code}`, {
      token: room.creator_token,
    });
    expect(again.body).toEqual(revoked.body);
    const third = await post(`/api/rooms/${room.slug}/join`, undefined, { invite: token });
    expect(third.status).toBe(400);
    expect(third.body.error.code).toBe('invite.invalid');
    const stillWorks = await post(`/api/rooms/${room.slug}/choose`, second.body.participant_token, { choice: 'a' });
    expect(stillWorks.status).toBe(200);

    const listed = await call(svc.base, 'GET', `/api/rooms/${room.slug}/invites`, { token: room.creator_token });
    expect(listed.body.invites.map((i: any) => [i.label, i.status])).toEqual([['dana', 'revoked']]);
    expect(listed.text).not.toContain(token);
    const notOperator = await call(svc.base, 'GET', `/api/rooms/${room.slug}/invites`, {
      token: second.body.participant_token,
    });
    expect(notOperator.status).toBe(403);
    expect(notOperator.body.error.code).toBe('authority.denied');
    const unknownCode = await call(svc.base, 'DELETE', `/api/rooms/${room.slug}/invites/nosuchcode12`, {
      token: room.creator_token,
    });
    expect(unknownCode.body.error.code).toBe('invite.invalid');
  });

  it('holds back early close while expected invites are pending', async () => {
    const room = (
      await post('/api/rooms', undefined, {
        question: 'Gate?',
        options: ['a', 'b'],
        config: { early_close: true, settle_window: 0 },
      })
    ).body;
    const pending = await post(`/api/rooms/${room.slug}/invites`, room.creator_token, { label: 'erin' });
    await post(`/api/rooms/${room.slug}/invites`, room.creator_token, { label: 'watcher', role: 'observer' });
    const chosen = await post(`/api/rooms/${room.slug}/choose`, room.creator_token, { choice: 'a' });
    expect(chosen.body.status).toBe('voting');
    const view = await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: room.creator_token });
    expect(view.body.roster.waiting_for).toEqual(['erin']);
    const revoked = await call(svc.base, 'DELETE', `/api/rooms/${room.slug}/invites/${pending.body.invite.code}`, {
      token: room.creator_token,
    });
    expect(revoked.status).toBe(200);
    const outcome = await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.creator_token });
    expect(outcome.body.decisions[0].outcome_status).toBe('completed');
  });

  it('applies roles, authorities, settings and capacity', async () => {
    const room = (
      await post('/api/rooms', undefined, {
        question: 'Roles?',
        options: ['a', 'b'],
        config: { max_participants: 3, option_proposal_authority: { kind: 'none' } },
      })
    ).body;
    const ann = (await post(`/api/rooms/${room.slug}/join`, undefined, { display_name: 'ann' })).body;
    await post(`/api/rooms/${room.slug}/join`, undefined, { display_name: 'bob' });
    const full = await post(`/api/rooms/${room.slug}/join`, undefined, {});
    expect(full.status).toBe(409);
    expect(full.body.error.code).toBe('room.at_capacity');

    const noPropose = await post(`/api/rooms/${room.slug}/options`, room.creator_token, { option: 'c' });
    expect(noPropose.status).toBe(403);
    expect(noPropose.body.error.details).toEqual({ authority: 'option_proposal_authority', required: 'none' });

    const demote = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/members/ann`, {
      token: room.creator_token,
      body: { role: 'observer' },
    });
    expect(demote.body).toEqual({
      slug: room.slug,
      participant: { id: ann.participant_id, display_name: 'ann', role: 'observer' },
    });
    const observerChoose = await post(`/api/rooms/${room.slug}/choose`, ann.participant_token, { choice: 'a' });
    expect(observerChoose.status).toBe(403);
    expect(observerChoose.body.error.code).toBe('authority.denied');
    const notOperator = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/members/bob`, {
      token: ann.participant_token,
      body: { role: 'observer' },
    });
    expect(notOperator.status).toBe(403);
    const creatorRole = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/members/${room.participant_id}`, {
      token: room.creator_token,
      body: { role: 'observer' },
    });
    expect(creatorRole.status).toBe(400);

    const settings = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: room.creator_token,
      body: { settings: { max_open_decisions: 3, settle_window: 10 } },
    });
    expect(settings.body.changed).toEqual(['max_open_decisions', 'settle_window']);
    expect(settings.body.config.max_open_decisions).toBe(3);
    const immutable = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: room.creator_token,
      body: { settings: { mechanism: 'plurality' } },
    });
    expect(immutable.body.error.details.reason).toBe('immutable_key');
    const unknown = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: room.creator_token,
      body: { settings: { colour: 'red' } },
    });
    expect(unknown.body.error.details.reason).toBe('unknown_keys');
    const wrongShape = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: room.creator_token,
      body: { max_open_decisions: 2 },
    });
    expect(wrongShape.status).toBe(400);
    const byParticipant = await call(svc.base, 'PATCH', `/api/rooms/${room.slug}/settings`, {
      token: ann.participant_token,
      body: { settings: { settle_window: 5 } },
    });
    expect(byParticipant.status).toBe(403);
    const events = await svc.service.store.events(room.slug, 0, 100);
    expect(events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(['participant.role_updated', 'room.settings_updated']),
    );
  });
});

describe('roster gate and invite expiry', () => {
  it('releases early close when an expected invite expires, with nobody touching the room', async () => {
    const { ManualClock } = await import('../../src/runtime/clock.js');
    const clock = new ManualClock(Date.parse('2026-05-01T10:00:00.000Z'));
    const svc = await startService({ clock });
    try {
      const room = (
        await call(svc.base, 'POST', '/api/rooms', {
          body: { question: 'Wait for erin?', options: ['a', 'b'], config: { early_close: true, settle_window: 0 } },
        })
      ).body;
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/invites`, {
        token: room.creator_token,
        body: { label: 'erin', expires_at: new Date(clock.now() + 120_000).toISOString() },
      });
      const chosen = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
        token: room.creator_token,
        body: { choice: 'a' },
      });
      expect(chosen.body.status).toBe('voting');
      clock.advance(120_000);
      await svc.service.scheduler.runDue();
      const events = await svc.service.store.events(room.slug, 0, 100);
      const completed = events.find((e) => e.event_type === 'decision.completed');
      expect(completed?.data).toMatchObject({ status: 'completed', winner: 'a' });
      expect(completed?.occurred_at).toBe(new Date(clock.now()).toISOString());
    } finally {
      await svc.stop();
    }
  });
});
