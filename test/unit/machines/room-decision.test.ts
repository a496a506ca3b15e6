/**
 * The machines decide legality: the codes below come from machine states and guards, not from
 * handlers. Also: settle-window semantics and persistence round trips.
 */
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { roomMachine } from '../../../machines/room.machine.js';
import { actorFor, errorCode, RoomHarness, T0 } from './harness.js';

function ask(h: RoomHarness, extra: Record<string, unknown> = {}, now = T0, id = `d${h.state().decisions.length + 1}`) {
  return h.send({
    type: 'ASK',
    now,
    actor: actorFor('host', true),
    decisionId: id,
    input: { question: 'Which one?', options: ['alpha', 'beta', 'gamma'], ...extra },
  });
}

function choose(h: RoomHarness, who: string, choice: unknown, now = T0) {
  return h.send({ type: 'CHOOSE', now, actor: actorFor(who), choice, reason: null });
}

describe('room and decision machines', () => {
  it('refuses choices while proposing and after sealing with the protocol codes', () => {
    const h = new RoomHarness();
    h.join('host');
    h.join('ann');
    ask(h, { options: [], proposal_window: 60 });
    expect(h.decision().phase).toBe('proposing');
    expect(errorCode(choose(h, 'ann', 'x'))).toBe('decision.proposing');
    expect(errorCode(h.send({ type: 'START_CHOOSING', now: T0, actor: actorFor('host', true) }))).toBe('input.invalid');
    h.send({ type: 'PROPOSE', now: T0, actor: actorFor('ann'), option: 'x' });
    expect(h.send({ type: 'START_CHOOSING', now: T0 + 1000, actor: actorFor('host', true) })).toMatchObject({
      ok: true,
    });
    expect(h.decision().phase).toBe('voting');
    h.send({ type: 'ADVANCE', decisionId: 'd1', now: h.decision().data.votingEndsAt });
    expect(h.decision().phase).toBe('resolved');
    expect(errorCode(choose(h, 'ann', 'x'))).toBe('decision.not_open');
  });

  it('refuses every write after close with room.concluded, and close while deciding with decision.not_open', () => {
    const h = new RoomHarness();
    h.join('host');
    ask(h);
    expect(errorCode(h.send({ type: 'CLOSE', now: T0, actor: actorFor('host', true), statement: null }))).toBe(
      'decision.not_open',
    );
    h.send({ type: 'ADVANCE', decisionId: 'd1', now: h.decision().data.votingEndsAt });
    expect(
      h.send({ type: 'CLOSE', now: T0 + 4000_000, actor: actorFor('host', true), statement: 'bye' }),
    ).toMatchObject({ ok: true });
    expect(h.actor.getSnapshot().value).toBe('concluded');
    expect(h.state().room.conclusion?.receipt?.prevHash).toBe(h.decision().data.receipt?.hash);
    expect(errorCode(h.join('late'))).toBe('room.concluded');
    expect(errorCode(ask(h))).toBe('room.concluded');
    expect(errorCode(choose(h, 'host', 'alpha'))).toBe('room.concluded');
    expect(h.events.at(-1)).toBe('room.concluded');
  });

  it('lets observers and seatless callers do nothing and checks eligibility in the decision', () => {
    const h = new RoomHarness({ creator_votes: false });
    h.join('host');
    h.join('ann');
    ask(h);
    expect(errorCode(choose(h, 'host', 'alpha'))).toBe('choice.not_eligible');
    const admin = {
      participantId: null,
      displayName: 'operator',
      agentId: 'operator',
      mandateRef: null,
      isOperator: true,
      isAdmin: true,
    };
    expect(errorCode(h.send({ type: 'CHOOSE', now: T0, actor: admin, choice: 'alpha', reason: null }))).toBe(
      'authority.denied',
    );
    expect(errorCode(choose(h, 'ann', 'delta'))).toBe('choice.invalid_option');
    expect(errorCode(choose(h, 'ann', ['alpha']))).toBe('input.invalid');
  });

  it('enforces the open-decision cap', () => {
    const h = new RoomHarness();
    h.join('host');
    ask(h);
    expect(errorCode(ask(h))).toBe('decision.already_open');
  });

  it('restarts settling only on a changed winner and at most four times', () => {
    const h = new RoomHarness({ early_close: true, settle_window: 30 });
    for (const id of ['host', 'ann', 'bob']) h.join(id);
    ask(h);
    choose(h, 'ann', 'alpha', T0);
    choose(h, 'bob', 'beta', T0);
    choose(h, 'host', 'alpha', T0);
    expect(h.decision().phase).toBe('settling');
    const firstEnd = h.decision().data.settling!.endsAt;
    choose(h, 'host', 'alpha', T0 + 5_000);
    expect(h.decision().data.settling!.endsAt).toBe(firstEnd);
    // the host's ballot decides the 2–1 majority: each flip changes the winner
    ['beta', 'alpha', 'beta', 'alpha'].forEach((pick, i) => {
      choose(h, 'host', pick, T0 + 10_000 * (i + 1));
      expect(h.decision().data.settling!.endsAt).toBe(T0 + 10_000 * (i + 1) + 30_000);
    });
    expect(h.decision().data.restarts).toBe(4);
    expect(h.decision().phase).toBe('settling');
    choose(h, 'host', 'beta', T0 + 60_000);
    expect(h.decision().phase).toBe('resolved');
    expect(h.decision().data.seal).toMatchObject({ winner: 'beta', at: T0 + 60_000 });
  });

  it('never determines a split agreement decision early', () => {
    const h = new RoomHarness({ early_close: true, settle_window: 0 });
    for (const id of ['host', 'ann', 'bob']) h.join(id);
    ask(h, { agreement: true });
    choose(h, 'host', 'alpha');
    choose(h, 'ann', 'alpha');
    choose(h, 'bob', 'beta');
    expect(h.decision().phase).toBe('voting');
    expect(errorCode(h.send({ type: 'ABSTAIN', now: T0, actor: actorFor('bob'), reason: 'no' }))).toBe('input.invalid');
    choose(h, 'bob', 'alpha');
    expect(h.decision().phase).toBe('resolved');
    expect(h.decision().data.seal).toMatchObject({ status: 'completed', winner: 'alpha' });
  });

  it('persists and restores mid-settling with identical behaviour', () => {
    const h = new RoomHarness({ early_close: true, settle_window: 30 });
    h.join('host');
    h.join('ann');
    ask(h);
    choose(h, 'host', 'beta');
    choose(h, 'ann', 'beta');
    const persisted = JSON.parse(JSON.stringify(h.actor.getPersistedSnapshot()));
    const restored = new RoomHarness({}, persisted);
    expect(restored.decision().phase).toBe('settling');
    expect(restored.state()).toEqual(h.state());
    restored.send({ type: 'ADVANCE', decisionId: 'd1', now: T0 + 30_000 });
    expect(restored.decision().data.seal).toMatchObject({ winner: 'beta', at: T0 + 30_000, votingEndedAt: T0 });
    // a fresh createActor from the same snapshot also works (what the registry does)
    const again = createActor(roomMachine, { snapshot: persisted, input: undefined as never });
    again.start();
    expect(again.getSnapshot().matches({ active: 'deciding' })).toBe(true);
  });
});
