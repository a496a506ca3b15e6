/** Read views from machine state: brief wording, how_to_choose, choice visibility, delta vocabulary. */
import { describe, expect, it } from 'vitest';
import { agentView } from '../../../src/domain/views/agent-view.js';
import { delta, deltaEntry } from '../../../src/domain/views/delta.js';
import { redactEvent } from '../../../src/domain/views/events.js';
import { actorFor, RoomHarness, T0 } from '../machines/harness.js';

const reader = (id: string | null) => ({
  participantId: id,
  role: id ? ('participant' as const) : ('observer' as const),
  actor: id ? actorFor(id) : null,
});

function setup(config: Record<string, unknown> = {}) {
  const h = new RoomHarness(config as never);
  h.join('host');
  h.join('ann');
  h.send({
    type: 'ASK',
    now: T0,
    actor: actorFor('host', true),
    decisionId: 'd1',
    input: { question: 'Lunch?', options: ['pizza', 'sushi'] },
  });
  return h;
}

describe('agent view', () => {
  it('uses the required brief wording while deciding, after deciding and after closing', () => {
    const h = setup();
    let view = agentView(h.state(), reader('ann'), T0 + 60_000);
    expect(view.brief).toBe(
      'Deciding now: "Lunch?" (decision 1, choosing) — 0 of 2 have chosen; closes in 59 minutes. You have not chosen yet.',
    );
    expect(view.more).toHaveProperty('abstain');
    h.send({ type: 'ADVANCE', decisionId: 'd1', now: T0 + 3600_000 });
    view = agentView(h.state(), reader('ann'), T0 + 3600_000);
    expect(view.brief).toBe('Last decided: "Lunch?" → no winner (no_quorum). No decision is open.');
    expect(view.decided).toEqual([
      { seq: 1, question: 'Lunch?', outcome: 'no_quorum', receipt: expect.stringMatching(/^sha256:/) },
    ]);
    h.send({ type: 'CLOSE', now: T0 + 3700_000, actor: actorFor('host', true), statement: 'Thanks' });
    view = agentView(h.state(), reader('ann'), T0 + 3700_000);
    expect(view.brief).toBe('Room closed: this room is read-only. Closing statement: "Thanks".');
    expect(view.status).toBe('concluded');
  });

  it('withholds act affordances from observers', () => {
    const view = agentView(setup().state(), reader(null), T0);
    expect(view.role).toBe('observer');
    expect((view.decision as any).can_propose_more).toBeUndefined();
    expect((view.rules as any).can_propose).toBeUndefined();
    expect(view.more).not.toHaveProperty('ask');
    expect(view.more).not.toHaveProperty('abstain');
  });

  it('hides individual choices unless choice_visibility is live', () => {
    const hidden = setup({ choice_visibility: 'never' });
    hidden.send({ type: 'CHOOSE', now: T0, actor: actorFor('ann'), choice: 'sushi', reason: null });
    expect(agentView(hidden.state(), reader('ann'), T0).choices).toBeNull();
    const live = setup();
    live.send({ type: 'CHOOSE', now: T0, actor: actorFor('ann'), choice: '2', reason: null });
    expect(agentView(live.state(), reader('ann'), T0).choices).toEqual([
      { who: 'ann', option: 2, choice: 'sushi', at: new Date(T0).toISOString() },
    ]);
  });
});

describe('delta and events', () => {
  const stored = (seq: number, event_type: string, data: Record<string, unknown>) => ({
    id: `e${seq}`,
    seq,
    event_type,
    occurred_at: new Date(T0).toISOString(),
    decision_id: 'd1',
    data,
  });

  it('maps stored events to the delta vocabulary and redacts hidden choices', () => {
    const h = setup({ choice_visibility: 'after_decided' });
    const vote = stored(5, 'vote.cast', {
      seq: 1,
      participant_id: 'ann',
      display_name: 'ann',
      option_number: 2,
      choice: 'sushi',
      revised: false,
    });
    expect(redactEvent(h.state(), vote).data).toEqual({
      seq: 1,
      participant_id: 'ann',
      display_name: 'ann',
      revised: false,
      choice_redacted: true,
    });
    expect(deltaEntry(h.state(), vote)).toEqual({
      seq: 5,
      at: vote.occurred_at,
      decision: 1,
      type: 'choice_submitted',
      who: 'ann',
    });
    expect(deltaEntry(h.state(), stored(6, 'invite.accepted', {}))).toBeNull();
    const body = delta(h.state(), reader('ann'), 4, [vote], T0);
    expect(body.your_status).toBe('you have not chosen on the open decision');
    expect(body.current_through).toBe(h.state().head);
    expect(body.state).toBe('seq 1 deciding — 0/2 chosen');
  });
});
