/**
 * The read wall, probed where its usual tests do not look (docs/concepts.md, Rooms; docs/architecture.md,
 * Credentials). Three ways past it, each closed:
 * - A ballot cast by GET (`GET /api/rooms/{slug}/choose`, for agents that can only issue GETs) was the
 *   one authenticated GET answered without `Cache-Control: no-store`, so a cache between the agent and
 *   the service could keep one caller's answer and serve it again. Every authenticated GET of the
 *   operation table now says no-store, the ballot's among them, checked route by route.
 * - A mandate is verified before the wall, and a ballot's weight (checked against `svc.weight_cap`)
 *   is the room's mechanism speaking: a self-issued mandate capped at 1, sending a 3-credit ballot,
 *   was refused `mandate.weight_cap_exceeded` by a private quadratic room and `authority.denied` by
 *   any other, so anyone with the slug learnt the mechanism of a room they may not read. Behind the
 *   wall a mandate whose subject holds no seat there now weighs 1, as in every other room; a seated
 *   mandate is still held to its cap.
 * - MCP `list_rooms` kept listing a room (its `about`, its `status`) to a mandate seat after the operator
 *   set `config.auth` to `token_only`, when every read of the room refused that mandate. It now lists
 *   a room only when the room's reads accept the credential.
 * What held, and is guarded elsewhere: every read route answers an unknown slug 404 and a private one
 * 403 `room.join_required` carrying only the documented sliver (test/e2e/auth-matrix.test.ts), the
 * log carries nothing of a walled room (log-walls.test.ts), parked connections end with their
 * credential (sessions.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations/table.js';
import { freshAgentKey, selfIssuedMandate } from '../support/mandates.js';
import { listRoomsByMandate } from '../support/mcp-clients.js';
import { call, suiteService } from '../support/service.js';

const PASSWORD = 'correct horse battery staple';

describe('the read wall, probed', () => {
  const svc = suiteService();

  async function room(config: Record<string, unknown>, password?: string) {
    const created = await call(svc().base, 'POST', '/api/rooms', {
      body: {
        question: 'Which supplier?',
        options: ['alpha', 'beta'],
        display_name: 'Host',
        ...(password ? { password } : {}),
        config,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body as { slug: string; creator_token: string };
  }

  /**
   * Each authenticated GET route of the operation table, with what it needs to answer at once. A
   * GET added to the table without an entry here fails the test, so its caching is decided.
   */
  const GETS: Record<string, string> = {
    getRoom: '',
    getRoomMachine: '/machine',
    chooseByGet: '/choose?choice=1',
    listDecisions: '/decisions',
    getOutcome: '/outcome',
    getLogPositions: '/log-positions',
    listInvites: '/invites',
    awaitNextAction: '/next-action?wait=0',
    listEvents: '/events',
    listWebhooks: '/webhooks',
  };

  it('answers every authenticated GET, the ballot cast by GET included, with Cache-Control: no-store', async () => {
    const { base } = svc();
    const gets = OPERATIONS.filter((op) => op.method === 'GET' && op.path.startsWith('/api/rooms/{slug}'));
    expect(gets.map((op) => op.name).sort()).toEqual(Object.keys(GETS).sort());
    const open = await room({ visibility: 'private', voting_window: 60 }, PASSWORD);
    const started = await call(base, 'POST', `/api/rooms/${open.slug}/start-choosing`, {
      token: open.creator_token,
      body: {},
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    for (const [name, suffix] of Object.entries(GETS)) {
      // The ballot cast by GET has no HEAD form (test/e2e/decisions.test.ts): a HEAD there is refused.
      for (const method of name === 'chooseByGet' ? ['GET'] : ['GET', 'HEAD']) {
        const answer = await fetch(`${base}/api/rooms/${open.slug}${suffix}`, {
          method,
          headers: { authorization: `Bearer ${open.creator_token}` },
        });
        expect(answer.status, `${method} ${name}`).toBe(200);
        expect(answer.headers.get('cache-control'), `${method} ${name}`).toBe('no-store');
      }
    }
  });

  it('tells an outsider nothing of a private room’s mechanism through a mandate’s weight cap', async () => {
    const { base } = svc();
    const quadratic = await room({ visibility: 'private', mechanism: 'quadratic_vote' }, PASSWORD);
    const majority = await room({ visibility: 'private' }, PASSWORD);
    const outsider = selfIssuedMandate(freshAgentKey(), { weightCap: 1 });
    const answers = [];
    for (const { slug } of [quadratic, majority]) {
      const refused = await call(base, 'POST', `/api/rooms/${slug}/choose`, {
        headers: { 'x-mandate': outsider },
        body: { choice: { alpha: 3, beta: 0 } },
      });
      answers.push([refused.status, refused.body.error.code]);
    }
    expect(answers).toEqual([
      [403, 'authority.denied'],
      [403, 'authority.denied'],
    ]);

    // Seated, the same kind of mandate is held to its cap in the quadratic room.
    const member = selfIssuedMandate(freshAgentKey(), { weightCap: 1 });
    const joined = await call(base, 'POST', `/api/rooms/${quadratic.slug}/join`, {
      headers: { 'x-mandate': member },
      body: { display_name: 'capped agent', password: PASSWORD },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const started = await call(base, 'POST', `/api/rooms/${quadratic.slug}/start-choosing`, {
      token: quadratic.creator_token,
      body: {},
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const over = await call(base, 'POST', `/api/rooms/${quadratic.slug}/choose`, {
      headers: { 'x-mandate': member },
      body: { choice: { alpha: 3, beta: 0 } },
    });
    expect([over.status, over.body.error?.code, over.body.error?.details?.requested]).toEqual([
      401,
      'mandate.weight_cap_exceeded',
      3,
    ]);
    const within = await call(base, 'POST', `/api/rooms/${quadratic.slug}/choose`, {
      headers: { 'x-mandate': member },
      body: { choice: { alpha: 1, beta: 0 } },
    });
    expect(within.status, JSON.stringify(within.body)).toBe(200);
  });

  it('lists in MCP list_rooms only the rooms whose reads accept the credential', async () => {
    const { base } = svc();
    const { slug, creator_token } = await room({ visibility: 'private' }, PASSWORD);
    const mandate = selfIssuedMandate(freshAgentKey());
    const joined = await call(base, 'POST', `/api/rooms/${slug}/join`, {
      headers: { 'x-mandate': mandate },
      body: { display_name: 'mandate agent', password: PASSWORD },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const listed = () => listRoomsByMandate(base, mandate);
    const readable = async () =>
      (await call(base, 'GET', `/api/rooms/${slug}`, { headers: { 'x-mandate': mandate } })).status;
    const setAuth = async (auth: string) => {
      const set = await call(base, 'PATCH', `/api/rooms/${slug}/settings`, {
        token: creator_token,
        body: { settings: { auth } },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
    };
    expect([await readable(), await listed()]).toEqual([200, [slug]]);
    // The operator takes mandates out of the room: its reads refuse the seat's mandate, so does the list.
    await setAuth('token_only');
    expect([await readable(), await listed()]).toEqual([401, []]);
    await setAuth('either');
    expect([await readable(), await listed()]).toEqual([200, [slug]]);
  });
});
