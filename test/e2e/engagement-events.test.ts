/**
 * Cursor replay GET /events (06 §3) and the SSE stream GET /events/stream (06 §6) over real HTTP:
 * paging 1,000 events, cursors by id and by seq, redaction, the read wall, resume without gap or
 * duplicate, and the end of a stream at the room's conclusion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { openSse } from '../support/sse-client.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

describe('events replay and stream', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  const events = (slug: string, query: string, token?: string, headers: Record<string, string> = {}) =>
    call(svc.base, 'GET', `/api/rooms/${slug}/events?${query}`, { ...(token ? { token } : {}), headers });
  const discuss = (slug: string, token: string, body: string) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body } });
  const stream = (slug: string, query = '', headers: Record<string, string> = {}) =>
    openSse(`${svc.base}/api/rooms/${slug}/events/stream${query}`, headers);

  it('pages 1,000 events with limit=100, each exactly once and in order; since_event_id agrees with since_seq', async () => {
    const { slug, tokens } = await seatedRoom(
      svc.base,
      {
        about: 'A busy room',
        config: {
          visibility: 'public',
          max_total_deliberation_messages: 5000,
          max_deliberation_messages_per_participant: 500,
        },
      },
      4,
    );
    for (let i = 0; i < 996; i++) {
      const posted = await discuss(slug, tokens[i % 4]!, `message ${i}`);
      expect(posted.status).toBe(200);
    }
    const head = (await call(svc.base, 'GET', `/api/rooms/${slug}`)).body.current_through;
    expect(head).toBe(1000);

    const bySeq: any[] = [];
    let cursor = 0;
    let pages = 0;
    for (;;) {
      const page = await events(slug, `since_seq=${cursor}&limit=100`);
      expect(page.status).toBe(200);
      expect(page.body.slug).toBe(slug);
      bySeq.push(...page.body.events);
      pages++;
      if (!page.body.has_more) break;
      cursor = page.body.events.at(-1).seq;
    }
    expect(pages).toBe(10);
    expect(bySeq.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(bySeq.map((e) => e.id)).size).toBe(1000);
    expect(Object.keys(bySeq[10]).sort()).toEqual(['data', 'decision_id', 'event_type', 'id', 'occurred_at', 'seq']);

    const byId: any[] = [];
    let lastId: string | null = null;
    for (;;) {
      const page = await events(slug, `limit=100${lastId ? `&since_event_id=${lastId}` : ''}`);
      byId.push(...page.body.events);
      if (!page.body.has_more) break;
      lastId = page.body.events.at(-1).id;
    }
    expect(byId).toEqual(bySeq);
    const middle = bySeq[499];
    expect((await events(slug, `since_event_id=${middle.id}&limit=3`)).body).toEqual(
      (await events(slug, `since_seq=${middle.seq}&limit=3`)).body,
    );
    expect((await events(slug, 'since_seq=1000')).body).toEqual({ slug, events: [], has_more: false });
    expect((await events(slug, '')).body.events).toHaveLength(100);
  });

  it('renders the delta from the same log', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Which way?', options: ['left', 'right'] }, 2);
    await discuss(slug, tokens[1]!, 'left is shorter');
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'left' } });
    const replay = (await events(slug, 'since_seq=0', tokens[0])).body.events;
    const delta = (await call(svc.base, 'GET', `/api/rooms/${slug}?since=0`, { token: tokens[0] })).body;
    expect(delta.new.map((e: any) => e.seq)).toEqual(replay.map((e: any) => e.seq));
    expect(delta.new.map((e: any) => e.type)).toEqual([
      'joined',
      'decision_opened',
      'joined',
      'discussion',
      'choice_submitted',
    ]);
    expect(replay.map((e: any) => e.event_type)).toEqual([
      'participant.joined',
      'decision.opened',
      'participant.joined',
      'discussion.posted',
      'vote.cast',
    ]);
  });

  it('redacts hidden choices when serving them', async () => {
    const { slug, tokens } = await seatedRoom(
      svc.base,
      { question: 'Secret?', options: ['a', 'b'], config: { choice_visibility: 'never' } },
      2,
    );
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'b' } });
    const cast = (await events(slug, 'since_seq=0', tokens[0])).body.events.find(
      (e: any) => e.event_type === 'vote.cast',
    );
    expect(cast.data.choice_redacted).toBe(true);
    expect(cast.data).not.toHaveProperty('choice');
    expect(cast.data).not.toHaveProperty('option_number');
    expect(cast.data.display_name).toBe('member-1');
  });

  it('refuses bad cursors and limits', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Cursors' }, 1);
    for (const query of [
      'since_event_id=00000000-0000-4000-8000-000000000000',
      'limit=0',
      'limit=1001',
      'since_seq=x',
    ]) {
      const refused = await events(slug, query, tokens[0]);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code).toBe('input.invalid');
    }
    expect((await events('nosuchroom', '', tokens[0])).body.error.code).toBe('room.not_found');
  });

  it('applies the read wall to replay and stream alike', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Unlisted room' }, 1);
    const outsider = await events(slug, '');
    expect(outsider.status).toBe(403);
    expect(outsider.body.error.code).toBe('room.join_required');
    expect(outsider.body.error.details).toEqual({
      slug,
      visibility: 'unlisted',
      join_required: true,
      password_supported: false,
    });
    const streamed = await stream(slug);
    expect(streamed.status).toBe(403);
    expect(streamed.error.error.code).toBe('room.join_required');
    expect((await events(slug, '', tokens[0])).status).toBe(200);

    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Private', password: 'correct horse battery' },
    });
    const byPassword = await events(created.body.slug, '', undefined, { 'x-room-password': 'correct horse battery' });
    expect(byPassword.status).toBe(200);
    const streamByPassword = await stream(created.body.slug, '?since_seq=0', {
      'x-room-password': 'correct horse battery',
    });
    expect(streamByPassword.status).toBe(200);
    streamByPassword.close();
  });

  it('streams backfill then live frames; a client resuming with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Streaming' }, 2);
    for (let i = 0; i < 3; i++) await discuss(slug, tokens[0]!, `before ${i}`);
    const first = await stream(slug, '?since_seq=0', { authorization: `Bearer ${tokens[1]}` });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('x-accel-buffering')).toBe('no');
    const backfill = await first.waitFor(5);
    expect(backfill.map((f) => JSON.parse(f.data!).seq)).toEqual([1, 2, 3, 4, 5]);
    for (const frame of backfill) {
      const event = JSON.parse(frame.data!);
      expect(frame.id).toBe(event.id);
      expect(frame.event).toBe(event.event_type);
    }

    await discuss(slug, tokens[0]!, 'live 1');
    const k = (await first.waitFor(6))[5]!;
    expect(JSON.parse(k.data!)).toMatchObject({ seq: 6, event_type: 'discussion.posted', data: { body: 'live 1' } });
    first.close();
    await eventually(() => svc.service.engagement.streams.size === 0);

    for (let i = 0; i < 4; i++) await discuss(slug, tokens[i % 2]!, `while away ${i}`);
    const resumed = await stream(slug, '?since_seq=0', {
      authorization: `Bearer ${tokens[1]}`,
      'last-event-id': k.id!,
    });
    const caughtUp = await resumed.waitFor(4);
    await discuss(slug, tokens[0]!, 'live 2');
    const all = await resumed.waitFor(5);
    expect(all.map((f) => JSON.parse(f.data!).seq)).toEqual([7, 8, 9, 10, 11]);
    expect(caughtUp.length).toBeGreaterThanOrEqual(4);
    resumed.close();

    const bySinceId = await stream(slug, `?since_event_id=${k.id}`, { authorization: `Bearer ${tokens[1]}` });
    expect((await bySinceId.waitFor(5)).map((f) => JSON.parse(f.data!).seq)).toEqual([7, 8, 9, 10, 11]);
    bySinceId.close();
  });

  it('starts at the head without a cursor, refuses an unknown Last-Event-ID, and ends after room.concluded', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Ending' }, 2);
    const unknown = await stream(slug, '', {
      authorization: `Bearer ${tokens[1]}`,
      'last-event-id': '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.error.error).toMatchObject({ code: 'input.invalid', details: { field: 'Last-Event-ID' } });

    const live = await stream(slug, '', { authorization: `Bearer ${tokens[1]}` });
    await call(svc.base, 'POST', `/api/rooms/${slug}/close`, { token: tokens[0], body: { statement: 'done' } });
    const frames = await live.waitFor(1);
    expect(frames.map((f) => f.event)).toEqual(['room.concluded']);
    await eventually(() => live.ended());
  });
});
