/**
 * One commit wakes many parked long-polls, and the waiters of one wake key share one evaluation and
 * one answer, serialized once (src/engagement/waiters.ts, long-poll.ts, src/runtime/shared-answer.ts).
 * Sharing must not change what anyone receives: every woken answer, body and headers, is the answer
 * the same caller gets from an immediate `wait=0` call with the same query at the same instant, which
 * builds and serializes its own. Reader kinds: the creator, a member owed a choice, a member not
 * owed, an observer, an outsider (a mandate without a seat) on a public room; all three modes.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { freshAgentKey, selfIssuedMandate } from '../support/mandates.js';
import { call, suiteService } from '../support/service.js';

// Self-issued mandates are stamped with the wall clock: the service's manual clock starts there.
const T0 = Math.floor(Date.now() / 1000) * 1000;

/** What differs between two answers by design: the instant and the request's own id. */
const PER_REQUEST = new Set(['date', 'x-correlation-id']);

interface Caller {
  name: string;
  headers: Record<string, string>;
}

describe('a shared long-poll wake', () => {
  const clock = new ManualClock(T0);
  const svc = suiteService({ clock });

  const parked = () => svc().service.engagement.waiters.parked;
  const poll = (slug: string, caller: Caller, query: string) =>
    call(svc().base, 'GET', `/api/rooms/${slug}/next-action?${query}`, { headers: caller.headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Parks every (caller, query), then runs `commit`; resolves with each woken answer beside its wait=0 twin. */
  async function wokenBesideImmediate(slug: string, waits: [Caller, string][], commit: () => Promise<unknown>) {
    const before = parked();
    const answers = waits.map(([caller, query]) => poll(slug, caller, `${query}&wait=30`));
    await eventually(() => parked() === before + waits.length);
    await commit();
    const woken = await Promise.all(answers);
    const immediate = await Promise.all(waits.map(([caller, query]) => poll(slug, caller, `${query}&wait=0`)));
    return waits.map(([caller, query], i) => ({
      label: `${caller.name} ${query}`,
      woken: woken[i]!,
      immediate: immediate[i]!,
    }));
  }

  function expectSameAnswers(pairs: Awaited<ReturnType<typeof wokenBesideImmediate>>) {
    for (const { label, woken, immediate } of pairs) {
      const headers = (r: typeof woken) => [...r.headers].filter(([name]) => !PER_REQUEST.has(name));
      expect({ label, status: woken.status, text: woken.text, headers: headers(woken) }).toEqual({
        label,
        status: immediate.status,
        text: immediate.text,
        headers: headers(immediate),
      });
    }
  }

  it('gives every reader kind, in every mode, the answer it would get on its own', async () => {
    const { slug, tokens } = await seatedRoom(
      svc().base,
      { about: 'Shared wakes', config: { visibility: 'public', early_close: true, settle_window: 0 } },
      3,
    );
    const watcher = await call(svc().base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'watcher' } });
    const demoted = await call(svc().base, 'PATCH', `/api/rooms/${slug}/members/watcher`, {
      token: tokens[0],
      body: { role: 'observer' },
    });
    expect(demoted.body.participant.role).toBe('observer');
    const creator = { name: 'creator', headers: bearer(tokens[0]!) };
    const ann = { name: 'member ann', headers: bearer(tokens[1]!) };
    const bob = { name: 'member bob', headers: bearer(tokens[2]!) };
    const observer = { name: 'observer', headers: bearer(watcher.body.participant_token) };
    const outsider = { name: 'outsider', headers: { 'x-mandate': selfIssuedMandate(freshAgentKey()) } };
    const head = async () => (await svc().service.services.registry.read(slug))!.head;

    // The first decision opens: members become owed a choice; the others are told nothing can need them, or of the act.
    let since = await head();
    const opened = await wokenBesideImmediate(
      slug,
      [ann, bob, observer, outsider].flatMap((caller): [Caller, string][] => [
        [caller, 'for=my_choice'],
        [caller, `for=activity&since_seq=${since}`],
      ]),
      () =>
        call(svc().base, 'POST', `/api/rooms/${slug}/ask`, {
          headers: creator.headers,
          body: { question: 'Lunch?', options: ['soup', 'salad'] },
        }),
    );
    expect(opened.map(({ woken }) => woken.body.status)).toEqual([
      'actionable',
      'actionable',
      'actionable',
      'actionable',
      'timeout',
      'activity',
      'timeout',
      'activity',
    ]);
    expectSameAnswers(opened);

    // Ann chooses; Bob, still owed, decides it (two of three): completion for all, activity, and a
    // my_choice wait that nothing open can end any more.
    const chose = await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, {
      headers: ann.headers,
      body: { choice: 'soup' },
    });
    expect(chose.body.status).not.toBe('resolved');
    since = await head();
    const sealed = await wokenBesideImmediate(
      slug,
      [
        ...[creator, ann, bob, observer, outsider].map((caller): [Caller, string] => [
          caller,
          'for=completion&since_seq=0',
        ]),
        ...[ann, observer, outsider].map((caller): [Caller, string] => [caller, `for=activity&since_seq=${since}`]),
        [ann, 'for=my_choice'],
      ],
      () => call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { headers: bob.headers, body: { choice: 'soup' } }),
    );
    expect(sealed.map(({ woken }) => woken.body.status)).toEqual([
      ...Array(5).fill('actionable'),
      ...Array(3).fill('activity'),
      'timeout',
    ]);
    expect(sealed[0]!.woken.body.decision).toMatchObject({ status: 'resolved', resolved_winner: 'soup' });
    expectSameAnswers(sealed);
  });

  it('hands the waiters of one wake key one frozen answer', async () => {
    const { slug, tokens } = await seatedRoom(
      svc().base,
      { question: 'Ship?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
      2,
    );
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'yes' } });
    const state = await svc().service.services.registry.read(slug);
    const reader = { participantId: null, role: 'participant' as const, actor: null };
    const wait = (credential: string) =>
      svc().service.engagement.longPoll({
        slug,
        query: { mode: 'completion', reader, sinceSeq: 0 },
        waitSeconds: 30,
        claim: { address: '127.0.0.1', credential },
      });
    const before = parked();
    const answers = [wait('a'), wait('b')];
    await eventually(() => parked() === before + 2);
    expect(state?.head).toBeGreaterThan(0);
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'yes' } });
    const [first, second] = await Promise.all(answers);
    expect(first).toMatchObject({ status: 'actionable', for: 'completion', decision: { status: 'resolved' } });
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first!.decision)).toBe(true);
  });
});
