/**
 * The long-poll GET /next-action (06 §5) over real HTTP: immediate answers, event-driven wakes, the
 * three modes, agreement offers, the opener-seal wake, concluded rooms, disconnects and the ceiling.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const DECIDE_AT_ONCE = { early_close: true, settle_window: 0 };

describe('long-poll', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  const parked = () => svc.service.engagement.waiters.parked;
  const next = (slug: string, token: string | undefined, query: string) =>
    call(svc.base, 'GET', `/api/rooms/${slug}/next-action?${query}`, token ? { token } : {});
  /** Starts a long-poll and returns (wrapped, so awaiting this does not await the answer) once it is parked. */
  async function park(slug: string, token: string, query: string) {
    const before = parked();
    const answer = next(slug, token, query);
    await eventually(() => parked() > before);
    return { answer };
  }

  it('answers at once with wait=0, and at once when something is already actionable', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Which?', options: ['a', 'b'] });
    const started = performance.now();
    const owed = await next(slug, tokens[1]!, 'wait=30');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(owed.status).toBe(200);
    expect(owed.headers.get('cache-control')).toBe('no-store');
    expect(owed.body).toMatchObject({
      status: 'actionable',
      for: 'my_choice',
      decision: { seq: 1, question: 'Which?', options: ['a', 'b'], status: 'voting' },
    });
    expect(owed.body.also_actionable).toBeUndefined();

    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'a' } });
    const idle = await next(slug, tokens[1]!, 'wait=0');
    expect(idle.body).toMatchObject({ status: 'timeout', for: 'my_choice', next_poll_at: new Date(T0).toISOString() });
    expect(idle.body.hint).toMatch(/waiting is the action/);
  });

  it('for=completion parked before the deciding choice wakes within 100 ms of the commit', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, {
      question: 'Ship?',
      options: ['yes', 'no'],
      config: DECIDE_AT_ONCE,
    });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'yes' } });
    let wokeAt = 0;
    const { answer } = await park(slug, tokens[0]!, 'for=completion&since_seq=0&wait=30');
    const poll = answer.then((r) => {
      wokeAt = performance.now();
      return r;
    });
    const deciding = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'yes' },
    });
    const committedBy = performance.now();
    expect(deciding.body.status).toBe('resolved');
    const woken = await poll;
    expect(wokeAt - committedBy).toBeLessThan(100);
    expect(woken.body).toMatchObject({
      status: 'actionable',
      for: 'completion',
      decision: { seq: 1, status: 'resolved', resolved_winner: 'yes', resolved_outcome: 'pass' },
    });
    expect(woken.body.decision.receipt_hash).toMatch(/^sha256:/);
    expect(parked()).toBe(0);
  });

  it('for=completion honours the watermark and wakes when the scheduler seals at the deadline', async () => {
    clock.set(T0);
    const { slug, tokens } = await seatedRoom(svc.base, {
      question: 'Later?',
      options: ['x', 'y'],
      config: { voting_window: 600 },
    });
    const above = await next(slug, tokens[0]!, 'for=completion&since_seq=1&wait=0');
    expect(above.body.status).toBe('timeout');
    const { answer } = await park(slug, tokens[0]!, 'for=completion&wait=30');
    clock.advance(600_000);
    await svc.service.scheduler.runDue();
    const woken = await answer;
    expect(woken.body).toMatchObject({ status: 'actionable', decision: { seq: 1, status: 'resolved' } });
    clock.set(T0);
  });

  it('for=my_choice wakes a participant when a decision that needs it opens, never for its own act', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'A room first' }, 2);
    // Its own acts leave it waiting.
    const own = next(slug, tokens[1]!, 'wait=1');
    await eventually(() => parked() === 1);
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'thinking' } });
    expect((await own).body.status).toBe('timeout');

    const { answer } = await park(slug, tokens[1]!, 'for=my_vote&wait=30');
    const asked = await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: tokens[0],
      body: { question: 'Lunch?', options: ['soup', 'salad'] },
    });
    expect(asked.status).toBe(200);
    const woken = await answer;
    expect(woken.body).toMatchObject({
      status: 'actionable',
      for: 'my_choice',
      decision: { seq: 1, question: 'Lunch?' },
    });
  });

  it('lists every other owed decision in also_actionable, oldest first', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Many', config: { max_open_decisions: 3 } }, 2);
    for (const question of ['First?', 'Second?', 'Third?']) {
      await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
        token: tokens[0],
        body: { question, options: ['a', 'b'] },
      });
    }
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'a', decision: 2 } });
    const owed = await next(slug, tokens[1]!, 'wait=0');
    expect(owed.body.decision.seq).toBe(1);
    expect(owed.body.also_actionable.map((d: { seq: number }) => d.seq)).toEqual([3]);
  });

  it('treats an agreement decision as actionable only for a complete offer', async () => {
    const { slug, tokens } = await seatedRoom(
      svc.base,
      { about: 'Agree', config: { mechanism: 'simple_majority' } },
      3,
    );
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: tokens[0],
      body: { question: 'Together?', options: ['x', 'y'], agreement: true },
    });
    const status = async (i: number) => (await next(slug, tokens[i], 'wait=0')).body;
    expect((await status(1)).status).toBe('timeout');
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'x' } });
    expect((await status(1)).status).toBe('timeout');
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[2], body: { choice: 'x' } });
    expect(await status(1)).toMatchObject({ status: 'actionable', decision: { seq: 1, agreement: true } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'y' } });
    // Still an offer it has not accepted; the others now see a split, which needs nobody.
    expect((await status(1)).status).toBe('actionable');
    expect((await status(0)).status).toBe('timeout');
  });

  it('delivers the opener-seal wake once: wait=0 reports it, wait>0 consumes it', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Opener', config: DECIDE_AT_ONCE }, 2);
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: tokens[1],
      body: { question: 'Mine?', options: ['a', 'b'] },
    });
    // An owed choice outranks it.
    expect((await next(slug, tokens[1]!, 'wait=0')).body.decision).toMatchObject({ seq: 1, status: 'voting' });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'a' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'a' } });

    for (let i = 0; i < 2; i++) {
      const scan = await next(slug, tokens[1]!, 'wait=0');
      expect(scan.body).toMatchObject({ status: 'actionable', decision: { seq: 1, status: 'resolved' } });
    }
    expect((await next(slug, tokens[0]!, 'wait=0')).body.status).toBe('timeout');
    const delivered = await next(slug, tokens[1]!, 'for=activity&wait=5');
    expect(delivered.body).toMatchObject({ status: 'actionable', for: 'activity', decision: { seq: 1 } });
    expect((await next(slug, tokens[1]!, 'wait=0')).body.status).toBe('timeout');
  });

  it('consumes the opener-seal wake when the opener reads the room with its own credential', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Reader', config: DECIDE_AT_ONCE }, 2);
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: tokens[1],
      body: { question: 'Which one?', options: ['a'] },
    });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'a' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'a' } });
    // Someone else's read does not consume it.
    await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[0] });
    expect((await next(slug, tokens[1]!, 'wait=0')).body.status).toBe('actionable');
    await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token: tokens[1] });
    expect((await next(slug, tokens[1]!, 'wait=0')).body.status).toBe('timeout');
  });

  it('for=activity wakes on the first substantive event by someone else, with a pointer', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Talk' }, 2);
    const head = (await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[1] })).body.current_through;
    const { answer } = await park(slug, tokens[1]!, `for=activity&since_seq=${head}&wait=30`);
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'mine' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'late' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[0], body: { body: 'theirs' } });
    const woken = await answer;
    expect(woken.body).toMatchObject({
      status: 'activity',
      for: 'activity',
      event: { seq: head + 3, type: 'discussion', who: 'creator' },
    });
    // Without since_seq the cursor is the head at call time: nothing new yet.
    expect((await next(slug, tokens[1]!, 'for=activity&wait=0')).body.status).toBe('timeout');
  });

  it('on a concluded room: the conclusion is reported to an activity cursor before it, then closed timeouts', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Closing' }, 2);
    const head = (await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[1] })).body.current_through;
    const closed = await call(svc.base, 'POST', `/api/rooms/${slug}/close`, { token: tokens[0], body: {} });
    expect(closed.status).toBe(200);
    const activity = await next(slug, tokens[1]!, `for=activity&since_seq=${head}&wait=30`);
    expect(activity.body).toMatchObject({ status: 'activity', event: { seq: head + 1, type: 'room_concluded' } });
    const started = performance.now();
    const mine = await next(slug, tokens[1]!, 'wait=30');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(mine.body).toMatchObject({ status: 'timeout', for: 'my_choice' });
    expect(mine.body.hint).toMatch(/closed and read-only/);
  });

  it('refuses bad input and missing credentials, and 404s an unknown room', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Which one?', options: ['a', 'b'] }, 1);
    for (const query of ['wait=-1', 'wait=soon', 'for=everything', 'since_seq=-3']) {
      const refused = await next(slug, tokens[0]!, query);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code).toBe('input.invalid');
    }
    const anonymous = await next(slug, undefined, 'wait=0');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('auth.required');
    const wrong = await next(slug, 't_not-a-token', 'wait=0');
    expect(wrong.body.error.code).toBe('auth.invalid_token');
    const missing = await next('nosuchroom', tokens[0], 'wait=0');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('room.not_found');
  });

  it('accepts wait=999 (clamped to 50 s, see the unit test) and still wakes on the event', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Clamp' }, 1);
    const { answer } = await park(slug, tokens[0]!, 'wait=999');
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: tokens[0],
      body: { question: 'Now?', options: ['a'] },
    });
    expect((await answer).body.status).toBe('actionable');
  });

  it('releases the waiter at once when the client disconnects', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Gone' }, 1);
    const controller = new AbortController();
    const poll = fetch(`${svc.base}/api/rooms/${slug}/next-action?wait=30`, {
      headers: { authorization: `Bearer ${tokens[0]}` },
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await eventually(() => parked() === 1);
    controller.abort();
    await eventually(() => parked() === 0, 1000);
    expect(await poll).toBeInstanceOf(Error);
  });

  it('advertises long-polling, SSE and webhooks in discovery', async () => {
    const discovery = await call(svc.base, 'GET', '/.well-known/svc.json');
    expect(discovery.body).toMatchObject({
      supports_long_poll: true,
      long_poll_max_wait_seconds: 50,
      supports_sse_upgrade: true,
      long_running_pattern: 'webhook',
    });
  });
});

describe('long-poll ceiling', () => {
  let svc: RunningService;
  beforeAll(async () => {
    // Each address and each credential holds at most its share of the pool (engagement/capacity.ts):
    // the pool is filled by two clients, told apart by X-Forwarded-For.
    svc = await startService({ env: { MAX_PARKED_CONNECTIONS: '2', TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('answers 503 with the envelope once the process holds as many waits as allowed', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Full' }, 3);
    const from = (n: number) => ({ 'x-forwarded-for': `127.0.0.${n}` });
    const polls = [0, 1].map((i) =>
      call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=2`, { token: tokens[i], headers: from(i + 1) }),
    );
    await eventually(() => svc.service.engagement.waiters.parked === 2);
    const refused = await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=2`, {
      token: tokens[2],
      headers: from(3),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.code).toBe('vendor:conclave:unavailable');
    expect(refused.body.error.request_id).toBeTruthy();
    for (const poll of await Promise.all(polls)) expect(poll.body.status).toBe('timeout');
    // wait=0 never parks, so it is served even at the ceiling.
    expect((await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=0`, { token: tokens[0] })).status).toBe(
      200,
    );
  });
});
