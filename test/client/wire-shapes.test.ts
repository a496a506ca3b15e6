/**
 * The client's view types (agent view, full state, delta, outcome, waits) are generated from the
 * views' output schemas (scripts/client-types.ts); this checks them against what a real room answers:
 * each key spec below must list exactly the keys of its client type, marked required or optional as
 * the type marks them (tsc enforces that), and every answer a real room gives must have every
 * required key and no key the type does not name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as W from '../../src/client/index.js';
import { ConclaveClient } from '../../src/client/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { type RunningService, startService } from '../support/service.js';

/** Each key of T, as T marks it. */
type KeySpec<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'required' };
const spec = <T>(keys: KeySpec<T>): Record<string, 'optional' | 'required'> => keys;

const AGENT_DECISION = spec<W.AgentDecision>({
  seq: 'required',
  question: 'required',
  context: 'required',
  options: 'required',
  option_proposers: 'optional',
  status: 'required',
  agreement: 'optional',
  can_propose_more: 'optional',
  can_start_choosing: 'optional',
  proposals_close_at: 'optional',
  seconds_until_voting: 'optional',
  closes_at: 'required',
  seconds_left: 'required',
  choices_cast: 'required',
  eligible_voters: 'required',
  eligible: 'required',
  eligible_participant_ids: 'required',
  settling: 'optional',
});
const AGENT_VIEW = spec<W.AgentRoomView>({
  slug: 'required',
  status: 'required',
  about: 'required',
  role: 'required',
  agent: 'required',
  brief: 'required',
  current_through: 'required',
  decision: 'required',
  decisions_open: 'optional',
  discussion: 'required',
  discussion_earlier: 'optional',
  roster: 'required',
  decided: 'required',
  decided_earlier: 'optional',
  choices: 'required',
  abstentions: 'optional',
  rules: 'required',
  more: 'required',
});
const OPEN_ROW = spec<W.OpenDecisionRow>({
  seq: 'required',
  question: 'required',
  status: 'required',
  agreement: 'optional',
  options: 'required',
  choices_cast: 'required',
  closes_at: 'required',
  seconds_left: 'required',
  needs_you: 'optional',
});
const SUMMARY = spec<W.DecisionSummary>({
  id: 'required',
  seq: 'required',
  question: 'required',
  context: 'required',
  options: 'required',
  eligible_participant_ids: 'required',
  opened_at: 'required',
  voting_opens_at: 'required',
  voting_ends_at: 'required',
  status: 'required',
  agreement: 'optional',
  proposals_open: 'required',
  resolved_at: 'required',
  resolved_outcome: 'required',
  resolved_winner: 'required',
  outcome_status: 'required',
  prev_hash: 'required',
  receipt_hash: 'required',
  option_proposers: 'optional',
});
const ROOM_STATE = spec<W.RoomState>({
  slug: 'required',
  about: 'required',
  status: 'required',
  config: 'required',
  question: 'required',
  context: 'required',
  options: 'required',
  voting_ends_at: 'required',
  resolved_at: 'required',
  resolved_outcome: 'required',
  resolved_winner: 'required',
  resolution_payload: 'required',
  created_at: 'required',
  participant_count: 'required',
  eligible_voters: 'required',
  vote_count: 'required',
  active_decision_id: 'required',
  concluded_at: 'required',
  closing_statement: 'required',
  decisions: 'required',
  participants: 'required',
  invites: 'required',
  discussion: 'required',
  votes_visible_during: 'required',
  votes: 'required',
  abstentions: 'required',
  current_through: 'required',
});
const DELTA = spec<W.RoomDelta>({
  slug: 'required',
  status: 'required',
  agent: 'required',
  state: 'required',
  new: 'required',
  current_through: 'required',
  your_status: 'optional',
  role: 'optional',
  more: 'required',
});
const DELTA_ENTRY = spec<W.DeltaEntry>({
  seq: 'required',
  at: 'required',
  type: 'required',
  decision: 'optional',
  who: 'optional',
  said: 'optional',
  stance: 'optional',
  option: 'optional',
  choice: 'optional',
  question: 'optional',
  outcome: 'optional',
  winner: 'optional',
  role: 'optional',
  name: 'optional',
  reason: 'optional',
  revised: 'optional',
  agreement: 'optional',
  closing_statement: 'optional',
});
const OUTCOME = spec<W.Outcome>({
  slug: 'required',
  status: 'required',
  about: 'required',
  question: 'required',
  resolved_outcome: 'required',
  resolved_winner: 'required',
  resolved_at: 'required',
  receipt_hash: 'required',
  prev_hash: 'required',
  receipt_jws: 'required',
  decisions: 'required',
  conclusion: 'required',
  log_proofs_pending: 'optional',
  verification: 'required',
});
const OUTCOME_DECISION = spec<W.OutcomeDecision>({
  id: 'required',
  seq: 'required',
  question: 'required',
  options: 'required',
  status: 'required',
  agreement: 'optional',
  opened_at: 'required',
  voting_opens_at: 'required',
  voting_ends_at: 'required',
  resolved_at: 'required',
  resolved_outcome: 'required',
  resolved_winner: 'required',
  outcome_status: 'required',
  prev_hash: 'required',
  receipt_hash: 'required',
  receipt_jws: 'required',
  transparency_log: 'optional',
});
const CONCLUSION = spec<NonNullable<W.Outcome['conclusion']>>({
  concluded_at: 'required',
  closing_statement: 'required',
  concluded_by: 'required',
  prev_hash: 'required',
  receipt_hash: 'required',
  receipt_jws: 'required',
  transparency_log: 'optional',
});
const WAIT_DECISION = spec<W.WaitDecision>({
  id: 'required',
  seq: 'required',
  question: 'required',
  options: 'required',
  voting_ends_at: 'required',
  status: 'required',
  agreement: 'optional',
  resolved_outcome: 'optional',
  resolved_winner: 'optional',
  receipt_hash: 'optional',
});
const INVITE = spec<W.RoomInvite>({
  code: 'required',
  label: 'required',
  role: 'required',
  expected: 'required',
  status: 'required',
  binding: 'required',
  created_at: 'required',
  expires_at: 'required',
  accepted_at: 'required',
  accepted_participant_id: 'required',
  revoked_at: 'required',
});
const ASKED = spec<W.AskedDecision>({
  id: 'required',
  seq: 'required',
  question: 'required',
  context: 'required',
  options: 'required',
  eligible_participant_ids: 'required',
  voting_opens_at: 'required',
  voting_ends_at: 'required',
  prev_hash: 'required',
  status: 'required',
  agreement: 'optional',
});

/** The ways `body` departs from `keys`: a required key missing, or a key the type does not name. */
function departures(what: string, body: unknown, keys: Record<string, 'optional' | 'required'>): string[] {
  const record = body as Record<string, unknown>;
  const missing = Object.entries(keys)
    .filter(([key, mark]) => mark === 'required' && !(key in record))
    .map(([key]) => `${what}: missing ${key}`);
  const unknown = Object.keys(record)
    .filter((key) => !(key in keys))
    .map((key) => `${what}: unknown ${key}`);
  return [...missing, ...unknown];
}

describe('client wire types against the answers of a real room', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  const found: string[] = [];
  const check = (what: string, body: unknown, keys: Record<string, 'optional' | 'required'>) =>
    found.push(...departures(what, body, keys));

  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('match every view of a room through its life', async () => {
    const anyone = new ConclaveClient({ baseUrl: svc.base });
    const room = await anyone.createRoom({
      question: 'First?',
      options: ['a', 'b'],
      config: { type: 'persistent', visibility: 'public', voting_window: 60, max_open_decisions: 2 },
    });
    check('createRoom.decision', room.decision, SUMMARY);
    const host = new ConclaveClient({ baseUrl: svc.base, token: room.creator_token });
    const slug = room.slug;
    const seat = await anyone.joinRoom({ slug, display_name: 'second' });
    const member = new ConclaveClient({ baseUrl: svc.base, token: seat.participant_token! });
    const invite = await host.createInvite({ slug, label: 'third', expected: true });
    check('createInvite.invite', invite.invite, INVITE);
    await member.discuss({ slug, body: 'a, surely', stance: 'agree' });
    const asked = await member.ask({ slug, question: 'Second?', options: [], proposal_window: 600 });
    check('ask.decision', asked.decision, ASKED);
    await member.propose({ slug, option: 'later', decision: 2 });
    await host.choose({ slug, choice: 'a', reason: 'quick' });

    for (const [who, client] of [
      ['host', host],
      ['member', member],
      ['anyone', anyone],
    ] as const) {
      const view = await client.getRoom({ slug });
      check(`${who} view`, view, AGENT_VIEW);
      check(`${who} view.decision`, view.decision, AGENT_DECISION);
      for (const row of view.decisions_open ?? []) check(`${who} view.decisions_open[]`, row, OPEN_ROW);
    }
    const waited = await member.awaitNextAction({ slug, wait: 0 });
    expect(waited.status).toBe('actionable');
    if (waited.status === 'actionable') check('wait.decision', waited.decision, WAIT_DECISION);

    await member.choose({ slug, choice: 'a' });
    clock.advance(61_000);
    await svc.service.scheduler.runDue();
    await member.startChoosing({ slug, decision: 2 });
    await member.choose({ slug, choice: 'later', decision: 2 });

    const full = await host.getRoom({ slug, include: 'full' });
    check('full', full, ROOM_STATE);
    for (const d of full.decisions) check('full.decisions[]', d, SUMMARY);
    for (const i of full.invites) check('full.invites[]', i, INVITE);
    const listed = await member.listDecisions({ slug });
    for (const d of listed.decisions) check('listDecisions[]', d, SUMMARY);
    const delta = await member.readDelta({ slug, since: 0 });
    check('delta', delta, DELTA);
    for (const entry of delta.new) check(`delta.new[${entry.type}]`, entry, DELTA_ENTRY);
    const completion = await member.awaitNextAction({ slug, for: 'completion', since_seq: 0, wait: 0 });
    if (completion.status === 'actionable') check('completion.decision', completion.decision, WAIT_DECISION);

    clock.advance(61_000);
    await svc.service.scheduler.runDue();
    await host.closeRoom({ slug, statement: 'Done.' });
    const outcome = await member.outcome({ slug });
    check('outcome', outcome, OUTCOME);
    for (const d of outcome.decisions) check('outcome.decisions[]', d, OUTCOME_DECISION);
    check('outcome.conclusion', outcome.conclusion, CONCLUSION);
    expect(outcome.decisions.map((d) => d.resolved_winner)).toEqual(['a', 'later']);
    const after = await member.getRoom({ slug });
    check('closed view', after, AGENT_VIEW);
    const timeout = await member.awaitNextAction({ slug, wait: 0 });
    expect(timeout.status).toBe('timeout');

    expect(found).toEqual([]);
  });
});
