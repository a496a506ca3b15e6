/**
 * Look-alikes (docs/architecture.md, What others are shown): an attacker adds an option or takes a
 * seat name that a reader cannot tell from one already there — a trailing or leading space, a
 * Cyrillic "е" in "Yes", a Cyrillic "а" in "alice" — so a ballot, a receipt or an attribution naming
 * one reads as the other. Each is refused with a teaching input.invalid naming the one already
 * there, over REST and MCP (one operation code serves both); accepted texts still round-trip byte
 * for byte, and case-distinct options ("Nd5"/"nd5") stay two options.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectModern, type McpSession } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const CYRILLIC_E = '\u0435';
const CYRILLIC_A = '\u0430';

function expectRefused(res: { status: number; body: any }, field: string, says: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('input.invalid');
  expect(res.body.error.details.field).toBe(field);
  expect(res.body.error.message).toMatch(says);
}

describe('look-alike options and seat names', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let participant: McpSession;
  beforeAll(async () => {
    svc = await startService({ clock });
    participant = await connectModern(`${svc.base}/mcp`);
  });
  afterAll(async () => {
    await participant?.close();
    await svc?.stop();
  });

  const createRoom = (body: Record<string, unknown>) => call(svc.base, 'POST', '/api/rooms', { body });

  it('refuses "Yes ", " Yes" and a Cyrillic "Yеs" beside "Yes" when a room is created (REST)', async () => {
    for (const twin of ['Yes ', ' Yes', 'Yes\u00A0', `Y${CYRILLIC_E}s`]) {
      const res = await createRoom({ question: 'Ship it?', options: ['Yes', 'No', twin] });
      expectRefused(res, 'options', /Options 1 \("Yes"\) and 3 \(".*"\) read the same/);
    }
    expectRefused(
      await createRoom({ question: 'Ship it?', options: ['Yes', `Y${CYRILLIC_E}s`] }),
      'options',
      /U\+0435/,
    );
    // Whitespace inside the text counts the same as at its ends.
    expectRefused(await createRoom({ question: 'Where?', options: ['ap south', 'ap  south'] }), 'options', /same/);
  });

  it('keeps only the first of "Yes", "Yes ", " Yes", "Yеs" in one decision: proposals are refused naming option 1', async () => {
    const created = await createRoom({ question: 'Ship it?', options: ['Yes', 'No'] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { slug, creator_token: token } = created.body;
    for (const twin of ['Yes ', ' Yes', `Y${CYRILLIC_E}s`]) {
      const res = await call(svc.base, 'POST', `/api/rooms/${slug}/options`, { token, body: { option: twin } });
      expectRefused(res, 'option', /reads the same as option 1 \("Yes"\)/);
    }
    // The exact same text stays the protocol's duplicate: 200, the slate unchanged.
    const again = await call(svc.base, 'POST', `/api/rooms/${slug}/options`, { token, body: { option: 'Yes' } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.options).toEqual(['Yes', 'No']);
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token });
    expect(room.body.decisions?.[0]?.options ?? room.body.decision?.options).toEqual(['Yes', 'No']);
  });

  it('refuses a look-alike proposal over MCP too, and still takes case-distinct and visibly different ones', async () => {
    const created = await createRoom({ question: 'Which move?', options: ['Nd5', 'nd5'] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { slug, creator_token: token } = created.body;
    const refused = await participant.call('propose', { slug, token, option: `N${'d'}5 ` });
    expect(refused.isError, JSON.stringify(refused.body)).toBe(true);
    expect(refused.body.error.code).toBe('input.invalid');
    expect(refused.body.error.details.field).toBe('option');
    expect(refused.body.error.message).toMatch(/reads the same as option 1 \("Nd5"\)/);
    const cyrillic = await participant.call('propose', { slug, token, option: `Y${CYRILLIC_E}s` });
    expect(cyrillic.isError, JSON.stringify(cyrillic.body)).toBe(false);
    const latin = await participant.call('propose', { slug, token, option: 'Yes' });
    expect(latin.isError, JSON.stringify(latin.body)).toBe(true);
    expect(latin.body.error.message).toMatch(/reads the same as option 3/);
    // Accepted options round-trip byte for byte: the Cyrillic one is stored as sent, never rewritten.
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token });
    expect(room.body.decisions?.[0]?.options ?? room.body.decision?.options).toEqual(['Nd5', 'nd5', `Y${CYRILLIC_E}s`]);
  });

  it('refuses look-alike options when a decision is opened (ask)', async () => {
    const created = await createRoom({ about: 'Release', config: { voting_window: 600 } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const asked = await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/ask`, {
      token: created.body.creator_token,
      body: { question: 'Ship it?', options: ['Yes', 'No', 'Yes '] },
    });
    expectRefused(asked, 'options', /Options 1 \("Yes"\) and 3 \("Yes "\) read the same/);
  });

  it('refuses a seat named "аlice" (Cyrillic а) beside "alice", over REST and MCP, naming the seat already there', async () => {
    const created = await createRoom({ question: 'Who?', options: ['a', 'b'] });
    const { slug } = created.body;
    const alice = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'alice' } });
    expect(alice.status, JSON.stringify(alice.body)).toBe(200);
    const spoof = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      body: { display_name: `${CYRILLIC_A}lice` },
    });
    expectRefused(spoof, 'display_name', /reads the same as the seat "alice"/);
    const upper = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'ALICE' } });
    // The same name in another case is the protocol's repeated name: a visible suffix, never a twin.
    expect(upper.status, JSON.stringify(upper.body)).toBe(200);
    expect(upper.body.display_name).toBe('ALICE (2)');
    const mcp = await participant.call('join_room', { slug, display_name: `${CYRILLIC_A}lice` });
    expect(mcp.isError, JSON.stringify(mcp.body)).toBe(true);
    expect(mcp.body.error.code).toBe('input.invalid');
    expect(mcp.body.error.details.field).toBe('display_name');
    expect(mcp.body.error.message).toMatch(/reads the same as the seat "alice"/);
    // A capital I for a small l reads as the same name too.
    expectRefused(
      await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'aIice' } }),
      'display_name',
      /"alice"/,
    );
    // A look-alike of a reserved role name claims that role.
    expectRefused(
      await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'оperator' } }),
      'display_name',
      /is reserved/,
    );
    const roster = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, {
      token: created.body.creator_token,
    });
    const names = JSON.stringify(roster.body);
    expect(names).not.toContain(`${CYRILLIC_A}lice`);
  });

  it('refuses an invite label that looks like a seat or another label', async () => {
    const created = await createRoom({ question: 'Who?', options: ['a', 'b'] });
    const { slug, creator_token: token } = created.body;
    await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'alice' } });
    const byInvite = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, {
      token,
      body: { label: `${CYRILLIC_A}lice` },
    });
    expectRefused(byInvite, 'label', /reads the same as the seat "alice"/);
    const bob = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, { token, body: { label: 'bob' } });
    expect(bob.status, JSON.stringify(bob.body)).toBe(200);
    const bob2 = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, { token, body: { label: 'bob ' } });
    expectRefused(bob2, 'label', /"bob"/);
    // A seat may not take the name a pending invite holds for someone else, in look-alike letters.
    const spoof = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'b\u043Eb' } });
    expectRefused(spoof, 'display_name', /"bob"/);
  });
});
