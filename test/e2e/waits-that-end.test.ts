/**
 * Waits that end (docs/agents.md, The REST loop): a my_choice wait that no open decision can end
 * answers at once, saying what happened and what to do next. Twenty agents on early-close rooms, some
 * arriving after their decision sealed, run the loop docs/agents.md documents, over REST and over MCP:
 * every loop ends without a wait that ran out. The clock is injected and never moves, so a wait that
 * would only end by timing out never answers (the loop counts it as stalled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const EARLY_CLOSE = { early_close: true, settle_window: 0, creator_votes: false };
/** Real time a wait may take before the loop calls it stalled: every answer here should come at once. */
const STALL_MS = 8000;

interface Seat {
  wait(): Promise<any>;
  choose(seq: number, choice: string): Promise<{ error?: any; body?: any }>;
  read(): Promise<any>;
  outcome(): Promise<any>;
}

interface Tally {
  waits: number;
  calls: number;
  stalled: number;
  chose: boolean;
  outcome: any;
  hints: string[];
}

/** The loop of docs/agents.md (The REST loop), as a program would run it. */
async function agentLoop(seat: Seat, choice: string): Promise<Tally> {
  const tally: Tally = { waits: 0, calls: 0, stalled: 0, chose: false, outcome: null, hints: [] };
  const finish = async () => {
    tally.calls++;
    tally.outcome = await seat.outcome();
    return tally;
  };
  for (let turn = 0; turn < 5; turn++) {
    tally.waits++;
    tally.calls++;
    const answer = await Promise.race([
      seat.wait(),
      new Promise((resolve) => setTimeout(() => resolve('stalled'), STALL_MS).unref()),
    ]);
    if (answer === 'stalled') {
      tally.stalled++;
      return tally;
    }
    const a = answer as any;
    if (a.status === 'actionable' && a.decision.status !== 'resolved') {
      tally.calls++;
      const chosen = await seat.choose(a.decision.seq, choice);
      if (chosen.error?.code === 'decision.not_open') return finish();
      expect(chosen.error, JSON.stringify(chosen.error)).toBeUndefined();
      tally.chose = true;
      if (chosen.body.status === 'resolved') return finish();
      continue;
    }
    if (a.status === 'actionable') return finish();
    // A timeout: look at the room. Nothing open → read the outcome and stop.
    tally.hints.push(a.hint);
    tally.calls++;
    const view = await seat.read();
    if (view.decision === null) return finish();
  }
  throw new Error('the loop did not end');
}

describe('waits that end', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  let participant: McpSession;
  let host: McpSession;
  beforeAll(async () => {
    svc = await startService({ clock });
    participant = await connectModern(`${svc.base}/mcp`);
    host = await connectModern(`${svc.base}/mcp/host`);
  });
  afterAll(async () => {
    await participant.close();
    await host.close();
    await svc.stop();
  });

  const rest = (slug: string, token: string): Seat => ({
    wait: async () => (await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=50`, { token })).body,
    choose: async (decision, choice) => {
      const r = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice, decision } });
      return r.status === 200 ? { body: r.body } : { error: r.body.error };
    },
    read: async () => (await call(svc.base, 'GET', `/api/rooms/${slug}`, { token })).body,
    outcome: async () => (await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token })).body,
  });
  const mcp = (slug: string, token: string): Seat => ({
    wait: () => ok(participant, 'wait', { slug, token, wait_seconds: 50 }),
    choose: async (decision, choice) => {
      const r = await participant.call('choose', { slug, token, choice, decision });
      return r.isError ? { error: r.body.error } : { body: r.body };
    },
    read: () => ok(participant, 'read_room', { slug, token }),
    outcome: () => ok(participant, 'outcome', { slug, token }),
  });

  it('20 agents, some arriving after the seal: every loop ends, none on a wait that ran out', async () => {
    // Room A over REST: ten seats from the start; six run their loop at once and seal it (6 of 10
    // for "a" cannot be overturned), the other four start theirs after the seal.
    const a = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Where?', options: ['a', 'b'], config: EARLY_CLOSE },
    });
    const slugA = a.body.slug as string;
    const seatsA: string[] = [];
    for (let i = 0; i < 10; i++) {
      const joined = await call(svc.base, 'POST', `/api/rooms/${slugA}/join`, { body: { display_name: `a-${i}` } });
      seatsA.push(joined.body.participant_token);
    }
    const earlyA = await Promise.all(seatsA.slice(0, 6).map((token) => agentLoop(rest(slugA, token), 'a')));
    const lateA = await Promise.all(seatsA.slice(6).map((token) => agentLoop(rest(slugA, token), 'b')));

    // Room B over MCP: six agents take part; four more join after the seal, outside its electorate.
    const b = await ok(host, 'create_room', { question: 'When?', options: ['now', 'later'], config: EARLY_CLOSE });
    const slugB = b.slug as string;
    const seatsB: string[] = [];
    for (let i = 0; i < 6; i++) {
      seatsB.push((await ok(participant, 'join_room', { slug: slugB, display_name: `b-${i}` })).participant_token);
    }
    const earlyB = await Promise.all(seatsB.map((token) => agentLoop(mcp(slugB, token), 'now')));
    const lateB: Tally[] = [];
    for (let i = 0; i < 4; i++) {
      const token = (await ok(participant, 'join_room', { slug: slugB, display_name: `late-${i}` })).participant_token;
      lateB.push(await agentLoop(mcp(slugB, token), 'now'));
    }

    const all = [...earlyA, ...lateA, ...earlyB, ...lateB];
    expect(all).toHaveLength(20);
    for (const tally of all) {
      expect(tally.stalled).toBe(0);
      expect(tally.waits).toBeLessThanOrEqual(2);
      expect(tally.calls).toBeLessThanOrEqual(5);
      expect(tally.outcome.decisions[0]).toMatchObject({ seq: 1, status: 'resolved' });
    }
    expect(earlyA.filter((t) => t.chose).length).toBeGreaterThanOrEqual(6);
    expect(lateA.every((t) => !t.chose && t.waits === 1)).toBe(true);
    for (const t of lateA) {
      expect(t.hints[0]).toMatch(/^Decision #1 sealed without your choice: "a" won\. No decision is open\./);
      expect(t.hints[0]).toContain(`GET /api/rooms/${slugA}/outcome`);
      expect(t.hints[0]).toMatch(/next-action\?for=activity&since_seq=\d+ \(MCP: wait with since=\d+\)/);
    }
    // The room's own next step says the same to a reader.
    const view = (await call(svc.base, 'GET', `/api/rooms/${slugA}`, { token: seatsA[9] })).body;
    expect(view.more.wait).toMatch(
      /^No open decision can need your choice: .*for=activity&since_seq=\d+ \(MCP: wait with since=\d+\)\.$/,
    );
    expect(lateB.every((t) => !t.chose && t.waits === 1)).toBe(true);
    expect(lateB[0]!.hints[0]).toMatch(/sealed without your choice: "now" won/);
  });

  it('answers at once when the open decisions cannot need you, and still waits for a first decision', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Planning', config: { creator_votes: false } },
    });
    const { slug, creator_token: creator } = created.body;
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'm' } });
    // No decision yet: the wait is for the first one (a wait=0 scan says so).
    const before = await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=0`, { token: creator });
    expect(before.body.hint).toMatch(/waiting is the action/);
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token: creator,
      body: { question: 'Which?', options: ['x', 'y'] },
    });
    const host = await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=50`, { token: creator });
    expect(host.body).toMatchObject({ status: 'timeout', for: 'my_choice' });
    expect(host.body.hint).toMatch(
      /^Decision #1 is open, but you cannot choose in it \(you are not in their electorate\)/,
    );
    // The wait for what comes next (activity from the head) parks as before, and wakes on the next act.
    const member = joined.body.participant_token as string;
    const owed = await call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=50`, { token: member });
    expect(owed.body).toMatchObject({ status: 'actionable', decision: { seq: 1, status: 'voting' } });
  });
});
