/**
 * GET /api/rooms/{slug}/machine over real HTTP: the same read wall as GET /api/rooms/{slug} for
 * every kind of credential, the envelope for an unknown room, no ballots in what it shows, the
 * current states and the timeline of a decision that settled, and its place in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { type SeatedRoom, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'correct horse battery';
const ADMIN = 'admin-token-for-the-machine-suite-0123456789';

describe('GET /api/rooms/{slug}/machine', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let open: SeatedRoom;
  let hidden: SeatedRoom;
  let other: SeatedRoom;

  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN } });
    open = await seatedRoom(
      svc.base,
      {
        question: 'Public?',
        options: ['yes', 'no'],
        config: { visibility: 'public', early_close: true, settle_window: 5, choice_visibility: 'never' },
      },
      3,
    );
    hidden = await seatedRoom(
      svc.base,
      { question: 'Hidden?', options: ['left', 'right'], config: { visibility: 'private' }, password: PASSWORD },
      1,
    );
    other = await seatedRoom(svc.base, { question: 'Elsewhere?', options: ['a', 'b'] }, 1);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers exactly as GET /api/rooms/{slug} does, for every credential', async () => {
    const cases: [string, { token?: string; headers?: Record<string, string> }][] = [
      ['no credential', {}],
      ['a token of another room', { token: other.tokens[0] }],
      ['a made-up token', { token: 'pt_not-a-real-token-at-all-0000000000' }],
      ['a member token', { token: hidden.tokens[0] }],
      ['the room password', { headers: { 'x-room-password': PASSWORD } }],
      ['a wrong password', { headers: { 'x-room-password': 'not the password' } }],
      ['the admin token', { token: ADMIN }],
    ];
    const seen: Record<string, [number, number, string?]> = {};
    for (const [name, credential] of cases) {
      const room = await call(svc.base, 'GET', `/api/rooms/${hidden.slug}`, credential);
      const machine = await call(svc.base, 'GET', `/api/rooms/${hidden.slug}/machine`, credential);
      seen[name] = [room.status, machine.status, machine.body.error?.code];
      if (room.status !== 200) expect(machine.body.error.code, name).toBe(room.body.error.code);
    }
    expect(seen).toEqual({
      'no credential': [403, 403, 'room.join_required'],
      'a token of another room': [401, 401, 'auth.invalid_token'],
      'a made-up token': [401, 401, 'auth.invalid_token'],
      'a member token': [200, 200, undefined],
      'the room password': [200, 200, undefined],
      'a wrong password': [401, 401, 'auth.invalid_password'],
      'the admin token': [200, 200, undefined],
    });
  });

  it('answers the envelope for an unknown room', async () => {
    const missing = await call(svc.base, 'GET', '/api/rooms/nosuchroom/machine');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('room.not_found');
  });

  it('shows states and steps, never a ballot', async () => {
    await call(svc.base, 'POST', `/api/rooms/${open.slug}/choose`, { token: open.tokens[0], body: { choice: 'yes' } });
    await call(svc.base, 'POST', `/api/rooms/${open.slug}/choose`, { token: open.tokens[1], body: { choice: 'yes' } });
    const settling = await call(svc.base, 'GET', `/api/rooms/${open.slug}/machine`);
    expect(settling.status).toBe(200);
    expect(settling.body.room).toEqual({
      state: 'room.active.deciding',
      active: ['room.active', 'room.active.deciding'],
    });
    expect(settling.body.decisions).toEqual([
      expect.objectContaining({
        seq: 1,
        question: 'Public?',
        state: 'decision.voting.settling',
        active: ['decision.voting', 'decision.voting.settling'],
      }),
    ]);
    // choice_visibility "never": nothing here may say who chose what before the seal.
    const text = JSON.stringify(settling.body);
    for (const hiddenValue of ['"yes"', open.ids[0]!, open.ids[1]!]) expect(text).not.toContain(hiddenValue);
    expect(settling.body.timeline.map((s: any) => [s.event_type, s.to, s.cause])).toEqual([
      ['decision.opened', 'decision.voting.open', 'always'],
      ['decision.opened', 'room.active.deciding', 'always [hasOpenDecisions]'],
      ['vote.cast', 'decision.voting.settling', 'D.EVALUATE [determined]'],
    ]);

    clock.advance(6_000);
    await svc.service.scheduler.runDue();
    const resolved = await call(svc.base, 'GET', `/api/rooms/${open.slug}/machine`);
    expect(resolved.body.decisions[0].state).toBe('decision.resolved');
    expect(resolved.body.timeline.slice(3).map((s: any) => [s.from, s.to, s.cause])).toEqual([
      ['decision.voting.settling', 'decision.sealed', 'D.ADVANCE [settleDue]'],
      ['decision.sealed', 'decision.resolved', 'D.RECEIPT'],
      ['room.active.deciding', 'room.active.open', 'always [noOpenDecisions]'],
    ]);
    expect(resolved.body.timeline_truncated).toBe(false);
    expect(resolved.body.charts.decision.transitions).toContainEqual(
      expect.objectContaining({
        source: 'decision.voting.settling',
        target: 'decision.sealed',
        event: 'D.ADVANCE',
        guard: 'settleDue',
      }),
    );
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    const get = doc.paths['/api/rooms/{slug}/machine'].get;
    expect(get.operationId).toBe('getRoomMachine');
    expect(JSON.stringify(get.responses['200'])).toContain('RoomMachine');
  });
});
