/** Decision details over REST: several open decisions and selectors, electorates, GET choose, caps. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

describe('decisions over REST', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('targets the oldest open decision by default and lists the open ones', async () => {
    const room = (
      await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Multi', config: { max_open_decisions: 2 } } })
    ).body;
    const t = room.creator_token;
    const ann = (await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, { body: { display_name: 'ann' } })).body;
    const first = await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'First?', options: ['x', 'y'] },
      headers: { 'idempotency-key': 'ask-1' },
    });
    const replayed = await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'First?', options: ['x', 'y'] },
      headers: { 'idempotency-key': 'ask-1' },
    });
    expect(replayed.body.decision.id).toBe(first.body.decision.id);
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'Second?', options: ['p', 'q'], eligible: ['ann'] },
    });
    const capped = await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'Third?', options: ['p', 'q'] },
    });
    expect(capped.status).toBe(409);
    expect(capped.body.error.code).toBe('decision.already_open');
    expect(capped.body.error.details.open_decisions).toEqual([
      { seq: 1, question: 'First?' },
      { seq: 2, question: 'Second?' },
    ]);

    const view = await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: ann.participant_token });
    expect(view.body.decision.seq).toBe(1);
    expect(view.body.decisions_open.map((d: any) => [d.seq, d.needs_you])).toEqual([
      [1, true],
      [2, true],
    ]);
    const notEligible = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
      token: t,
      body: { choice: 'p', decision: '2' },
    });
    expect(notEligible.status).toBe(403);
    expect(notEligible.body.error.code).toBe('choice.not_eligible');
    const byGet = await call(svc.base, 'GET', `/api/rooms/${room.slug}/choose?choice=%232&decision=2`, {
      token: ann.participant_token,
    });
    expect(byGet.body).toMatchObject({ decision: 2, cast_choice: 'q' });
    const defaulted = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
      token: ann.participant_token,
      body: { choice: 'x' },
    });
    expect(defaulted.body.decision).toBe(1);
    const revised = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
      token: ann.participant_token,
      body: { choice: 'y' },
    });
    expect(revised.body.revised).toBe(true);
    const delta = await call(svc.base, 'GET', `/api/rooms/${room.slug}?since=2`, { token: t });
    expect(delta.body.your_status).toBe('you have not chosen on the open decision');
    expect(delta.body.new.map((e: any) => e.type)).toEqual([
      'decision_opened',
      'decision_opened',
      'choice_submitted',
      'choice_submitted',
      'choice_submitted',
    ]);
    const ids = await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'Bad?', options: ['a', 'b'], eligible_participant_ids: ['nobody'] },
    });
    expect(ids.status).toBe(400); // field validation (step 9) precedes the cap (step 10)
  });

  it('shows last_seen_at only in rooms with read_receipts', async () => {
    for (const readReceipts of [true, false]) {
      const room = (
        await call(svc.base, 'POST', '/api/rooms', {
          body: { about: 'Seen?', config: { read_receipts: readReceipts } },
        })
      ).body;
      const ann = (await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, { body: { display_name: 'ann' } }))
        .body;
      await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: ann.participant_token });
      const full = await call(svc.base, 'GET', `/api/rooms/${room.slug}?include=full`, { token: room.creator_token });
      const seen = full.body.participants.find((p: any) => p.display_name === 'ann').last_seen_at;
      if (readReceipts) expect(seen).toMatch(/^\d{4}-\d\d-\d\dT/);
      else expect(seen).toBeNull();
    }
  });

  it('refuses GET choose for array ballots and credentials in its query', async () => {
    const room = (
      await call(svc.base, 'POST', '/api/rooms', {
        body: { question: 'Rank?', options: ['a', 'b'], config: { mechanism: 'ranked_choice' } },
      })
    ).body;
    const res = await call(svc.base, 'GET', `/api/rooms/${room.slug}/choose?choice=a`, { token: room.creator_token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('ballot_shape');
    const leak = await call(svc.base, 'GET', `/api/rooms/${room.slug}/choose?choice=a&token=${room.creator_token}`);
    expect(leak.body.error.details.reason).toBe('credential_in_url');
  });

  it('casts no ballot on HEAD: the one state-changing GET has no HEAD twin', async () => {
    const room = (await call(svc.base, 'POST', '/api/rooms', { body: { question: 'Safe?', options: ['a', 'b'] } }))
      .body;
    const head = await call(svc.base, 'HEAD', `/api/rooms/${room.slug}/choose?choice=a`, { token: room.creator_token });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST, GET');
    // The GET that follows is the seat's first ballot: the HEAD cast nothing for it to replace.
    const byGet = await call(svc.base, 'GET', `/api/rooms/${room.slug}/choose?choice=a`, { token: room.creator_token });
    expect(byGet.body).toMatchObject({ decision: 1, cast_choice: 'a', revised: false });
  });

  it('attaches speech to decisions or the room and enforces the caps', async () => {
    const room = (
      await call(svc.base, 'POST', '/api/rooms', {
        body: { about: 'Talk', config: { max_deliberation_messages_per_participant: 2 } },
      })
    ).body;
    const t = room.creator_token;
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token: t, body: { body: 'room-level 1' } });
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: t,
      body: { body: 'room-level 2', stance: 'extend' },
    });
    const capped = await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: t,
      body: { body: 'room-level 3' },
    });
    expect(capped.body.error.details.reason).toBe('message_cap_reached');
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: t,
      body: { question: 'Topic?', options: ['a', 'b'] },
    });
    const attached = await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: t,
      body: { body: 'on topic', stance: 'clarify' },
    });
    expect(attached.status).toBe(200);
    const badStance = await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: t,
      body: { body: 'x', stance: 'shout' },
    });
    expect(badStance.body.error.code).toBe('input.invalid');
    const view = await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: t });
    expect(view.body.discussion.map((m: any) => [m.said, m.decision])).toEqual([
      ['room-level 1', undefined],
      ['room-level 2', undefined],
      ['on topic', 1],
    ]);
    const disabled = (
      await call(svc.base, 'POST', '/api/rooms', {
        body: { about: 'Quiet', config: { deliberation_mode: 'disabled' } },
      })
    ).body;
    const quiet = await call(svc.base, 'POST', `/api/rooms/${disabled.slug}/discuss`, {
      token: disabled.creator_token,
      body: { body: 'x' },
    });
    expect(quiet.body.error.details.reason).toBe('deliberation_disabled');
  });
});
