/**
 * The foundation walkthrough over real HTTP, as a client that has never seen this code would do it:
 * create, join, read, discuss idempotently, propose, choose, resolve, verify the receipt chain with
 * plain node:crypto, close, see writes refused, delete.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

function b64urlJson(segment: string): any {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
}

/** Verifies a compact JWS against a JWKS exactly as an outside client would, with node:crypto only. */
function verifyWithJwks(jws: string, jwks: { keys: { kid: string; x: string }[] }) {
  const [h, p, s] = jws.split('.') as [string, string, string];
  const header = b64urlJson(h);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no key ${header.kid}`);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const ok = verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
  return { ok, header, payload: b64urlJson(p) };
}

const sha = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

describe('foundation walkthrough over REST', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('creates, decides, chains receipts, closes and deletes a room', async () => {
    const { base } = svc;
    const created = await call(base, 'POST', '/api/rooms', {
      body: {
        question: 'Where do we meet?',
        options: ['alpha', 'beta'],
        display_name: 'host',
        config: { visibility: 'unlisted', early_close: true, settle_window: 0, creator_votes: false },
      },
    });
    expect(created.status).toBe(200);
    const { slug, creator_token: hostToken } = created.body;
    expect(slug).toMatch(/^[abcdefghjkmnpqrstvwxyz23456789]{10}$/);
    expect(created.body.config.settle_window).toBe(0);
    expect(created.body.decision.status).toBe('voting');
    expect(created.headers.get('x-correlation-id')).toBeTruthy();

    const ann = await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'ann' } });
    const bob = await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'bob' } });
    expect(ann.status).toBe(200);
    expect(ann.body.participant_token).toMatch(/^t_[A-Za-z0-9_-]{43}$/);
    const annToken = ann.body.participant_token;
    const bobToken = bob.body.participant_token;

    const view = await call(base, 'GET', `/api/rooms/${slug}`, { token: annToken });
    expect(view.status).toBe(200);
    expect(view.headers.get('cache-control')).toBe('no-store');
    expect(view.body.agent).toBe(
      'This is a Conclave agent-coordination room. Read brief for the situation, act with the verbs listed in more, and call wait (GET next-action) whenever nothing needs you.',
    );
    expect(view.body.brief).toMatch(
      /^Deciding now: "Where do we meet\?" \(decision 1, choosing\) — 0 of 2 have chosen; closes in .+\. You have not chosen yet\.$/,
    );
    expect(view.body.decision.options).toEqual(['alpha', 'beta']);
    expect(view.body.rules.how_to_choose).toMatch(/^choose with a single option/);
    expect(view.body.roster.joined.map((m: any) => m.name)).toEqual(['host', 'ann', 'bob']);
    expect(view.body.roster.joined[0]).toMatchObject({ room_role: 'non_voting_host', voting_eligible: false });

    const said = await call(base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: annToken,
      body: { body: 'I prefer alpha', stance: 'agree' },
      headers: { 'idempotency-key': 'say-1' },
    });
    expect(said.status).toBe(200);
    const replay = await call(base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: annToken,
      body: { stance: 'agree', body: 'I prefer alpha' },
      headers: { 'idempotency-key': 'say-1' },
    });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(said.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const conflict = await call(base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: annToken,
      body: { body: 'something else' },
      headers: { 'idempotency-key': 'say-1' },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency.conflict');
    const full = await call(base, 'GET', `/api/rooms/${slug}?include=full`, { token: annToken });
    expect(full.body.discussion).toHaveLength(1);

    const proposed = await call(base, 'POST', `/api/rooms/${slug}/options`, {
      token: bobToken,
      body: { option: 'gamma' },
    });
    expect(proposed.body).toMatchObject({
      accepted: true,
      options: ['alpha', 'beta', 'gamma'],
      choosing_open: true,
      decision: 1,
    });
    const duplicate = await call(base, 'POST', `/api/rooms/${slug}/options`, {
      token: bobToken,
      body: { option: '#2' },
    });
    expect(duplicate.body).toMatchObject({ accepted: true, options: ['alpha', 'beta', 'gamma'] });
    expect(duplicate.body.reason).toMatch(/already present/);

    const invalid = await call(base, 'POST', `/api/rooms/${slug}/choose`, {
      token: annToken,
      body: { choice: 'delta' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('choice.invalid_option');
    expect(invalid.body.error.details.options).toEqual([
      { number: 1, text: 'alpha' },
      { number: 2, text: 'beta' },
      { number: 3, text: 'gamma' },
    ]);

    const first = await call(base, 'POST', `/api/rooms/${slug}/choose`, {
      token: annToken,
      body: { choice: '#1', reason: 'closest' },
    });
    expect(first.body).toMatchObject({ ok: true, decision: 1, cast_choice: 'alpha', revised: false, status: 'voting' });
    const second = await call(base, 'POST', `/api/rooms/${slug}/choose`, {
      token: bobToken,
      body: { choice: 'alpha' },
    });
    expect(second.body).toMatchObject({ status: 'resolved', resolved_winner: 'alpha', resolved_outcome: 'pass' });

    const late = await call(base, 'POST', `/api/rooms/${slug}/choose`, { token: bobToken, body: { choice: 'beta' } });
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe('decision.not_open');

    const asked = await call(base, 'POST', `/api/rooms/${slug}/ask`, {
      token: hostToken,
      body: { question: 'Which day?', options: ['mon', 'tue'] },
    });
    expect(asked.status).toBe(200);
    expect(asked.body.decision.seq).toBe(2);
    await call(base, 'POST', `/api/rooms/${slug}/choose`, { token: annToken, body: { choice: 'tue' } });
    const sealed2 = await call(base, 'POST', `/api/rooms/${slug}/abstain`, {
      token: bobToken,
      body: { reason: 'no preference' },
    });
    expect(sealed2.body).toMatchObject({ abstained: true, status: 'resolved', resolved_winner: 'tue' });

    const outcome = await call(base, 'GET', `/api/rooms/${slug}/outcome`, { token: annToken });
    expect(outcome.status).toBe(200);
    expect(outcome.body.status).toBe('resolved');
    expect(outcome.body.resolved_winner).toBe('tue');
    const jwks = (await call(base, 'GET', '/.well-known/jwks.json')).body;
    const rows = outcome.body.decisions;
    expect(rows.map((r: any) => r.seq)).toEqual([1, 2]);
    expect(rows[0].prev_hash).toBeNull();
    expect(rows[1].prev_hash).toBe(rows[0].receipt_hash);
    for (const row of rows) {
      expect(sha(row.receipt_jws)).toBe(row.receipt_hash);
      const checked = verifyWithJwks(row.receipt_jws, jwks);
      expect(checked.ok).toBe(true);
      expect(checked.header).toEqual({ alg: 'EdDSA', kid: jwks.keys[0].kid, typ: 'svc-receipt+jwt' });
      expect(checked.payload.svc.prev_hash).toBe(row.prev_hash);
      expect(checked.payload.iss).toBe(`${base}/r/${slug}`);
    }
    const receipt2 = verifyWithJwks(rows[1].receipt_jws, jwks).payload;
    expect(receipt2.svc.abstentions).toEqual([
      { agent_id: `participant:${bob.body.participant_id}`, reason: 'no preference', declared_at: expect.any(String) },
    ]);
    expect(receipt2.svc.outcome).toMatchObject({
      status: 'completed',
      winning_option: 'tue',
      diagnostics: { cast_votes: 1, eligible_voters: 2 },
    });

    const denied = await call(base, 'POST', `/api/rooms/${slug}/close`, { token: annToken, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('authority.denied');
    const closed = await call(base, 'POST', `/api/rooms/${slug}/close`, {
      token: hostToken,
      body: { statement: 'Done.' },
    });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({
      ok: true,
      status: 'concluded',
      closing_statement: 'Done.',
      prev_hash: rows[1].receipt_hash,
    });
    const after = await call(base, 'GET', `/api/rooms/${slug}/outcome`, { token: annToken });
    expect(after.body.conclusion.prev_hash).toBe(rows[1].receipt_hash);
    expect(after.body.conclusion.receipt_hash).toBe(closed.body.receipt_hash);
    expect(sha(after.body.conclusion.receipt_jws)).toBe(closed.body.receipt_hash);
    const conclusion = verifyWithJwks(after.body.conclusion.receipt_jws, jwks);
    expect(conclusion.ok).toBe(true);
    expect(conclusion.payload.svc).toMatchObject({
      decision_kind: 'conclusion',
      closing_statement: 'Done.',
      sequence: 3,
    });

    const readAfter = await call(base, 'GET', `/api/rooms/${slug}`, { token: annToken });
    expect(readAfter.body.status).toBe('concluded');
    expect(readAfter.body.brief.toLowerCase()).toContain('room closed');
    expect(readAfter.body.brief).toContain('read-only');
    for (const [path, body, token] of [
      ['discuss', { body: 'hi' }, annToken],
      ['choose', { choice: 'alpha' }, annToken],
      ['options', { option: 'x' }, annToken],
      ['ask', { question: 'Again?', options: ['a', 'b'] }, hostToken],
      ['close', {}, hostToken],
      ['join', {}, undefined],
    ] as const) {
      const refused = await call(base, 'POST', `/api/rooms/${slug}/${path}`, { token, body });
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.code, path).toBe('room.concluded');
    }

    const noConfirm = await call(base, 'DELETE', `/api/rooms/${slug}`, { token: hostToken });
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.body.error.details.reason).toBe('confirmation_mismatch');
    const deleted = await call(base, 'DELETE', `/api/rooms/${slug}`, {
      token: hostToken,
      headers: { 'x-confirm-delete': slug },
    });
    expect(deleted.body).toEqual({ ok: true, deleted_room_slug: slug });
    const gone = await call(base, 'GET', `/api/rooms/${slug}/outcome`, { token: hostToken });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('room.not_found');
  });

  it('runs slate decisions: proposing refuses choices until start-choosing', async () => {
    const { base } = svc;
    const created = await call(base, 'POST', '/api/rooms', { body: { about: 'Planning room' } });
    const { slug, creator_token: host } = created.body;
    expect(created.body.decision).toBeNull();
    const asked = await call(base, 'POST', `/api/rooms/${slug}/ask`, {
      token: host,
      body: { question: 'What to build?', proposal_window: 600 },
    });
    expect(asked.body.decision.status).toBe('proposing');
    expect(asked.body.decision.voting_opens_at).not.toBeNull();
    const empty = await call(base, 'POST', `/api/rooms/${slug}/start-choosing`, { token: host, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.reason).toBe('empty_slate');
    await call(base, 'POST', `/api/rooms/${slug}/options`, { token: host, body: { option: 'a parser' } });
    const early = await call(base, 'POST', `/api/rooms/${slug}/choose`, { token: host, body: { choice: 1 } });
    expect(early.status).toBe(400);
    expect(early.body.error.code).toBe('decision.proposing');
    const started = await call(base, 'POST', `/api/rooms/${slug}/start-choosing`, {
      token: host,
      body: { decision: 1 },
    });
    expect(started.body.decision).toMatchObject({ seq: 1, status: 'voting', options: ['a parser'] });
    const again = await call(base, 'POST', `/api/rooms/${slug}/start-choosing`, { token: host, body: {} });
    expect(again.body.already_open).toBe(true);
    const frozen = await call(base, 'POST', `/api/rooms/${slug}/options`, { token: host, body: { option: 'a lexer' } });
    expect(frozen.body).toMatchObject({ accepted: false, options: ['a parser'] });
    const chosen = await call(base, 'POST', `/api/rooms/${slug}/choose`, { token: host, body: { choice: 'a parser' } });
    expect(chosen.body.status).toBe('voting');
    const unknown = await call(base, 'POST', `/api/rooms/${slug}/choose`, {
      token: host,
      body: { choice: 1, decision: 7 },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('decision.not_found');
    expect(unknown.body.error.details.open_decisions).toEqual([{ seq: 1, question: 'What to build?' }]);
  });

  it('keeps unlisted rooms behind the read wall on every read surface', async () => {
    const { base } = svc;
    const { slug } = (
      await call(base, 'POST', '/api/rooms', { body: { question: 'Secret plan?', options: ['x', 'y'] } })
    ).body;
    for (const path of [
      `/api/rooms/${slug}`,
      `/api/rooms/${slug}?include=full`,
      `/api/rooms/${slug}?since=0`,
      `/api/rooms/${slug}/decisions`,
      `/api/rooms/${slug}/outcome`,
    ]) {
      const res = await call(base, 'GET', path);
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('room.join_required');
      expect(res.body.error.details).toEqual({
        slug,
        visibility: 'unlisted',
        join_required: true,
        password_supported: false,
      });
      expect(res.text).not.toContain('Secret plan');
    }
    const page = await call(base, 'GET', `/r/${slug}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).not.toContain('Secret plan');
    // No acting form in the served HTML: the join form is an inert <template> the page's script mounts.
    expect(page.text.replace(/<template[\s\S]*?<\/template>/gi, '')).not.toMatch(/<form/i);
    const embedded = JSON.parse(
      /<script type="application\/svc\+json" id="room-state">(.*)<\/script>/.exec(page.text)![1]!,
    );
    expect(embedded).toMatchObject({
      schema: 'urn:svc:schema:url-room:v0',
      slug,
      visibility: 'unlisted',
      join_required: true,
      password_supported: false,
    });
    expect(embedded.view).toBeUndefined();
    const badToken = await call(base, 'GET', `/api/rooms/${slug}`, { token: 't_not-a-real-token' });
    expect(badToken.status).toBe(401);
    expect(badToken.body.error.code).toBe('auth.invalid_token');
  });

  it('escapes room text inside the public page script', async () => {
    const { base } = svc;
    const hostile = '</script><script>alert(1)</script>&';
    const { slug } = (
      await call(base, 'POST', '/api/rooms', { body: { about: hostile, config: { visibility: 'public' } } })
    ).body;
    const page = await call(base, 'GET', `/r/${slug}`);
    const script = /<script type="application\/svc\+json" id="room-state">(.*?)<\/script>/s.exec(page.text)![1]!;
    expect(script).not.toContain('<');
    expect(JSON.parse(script).view.about).toBe(hostile);
    const anonymous = await call(base, 'GET', `/api/rooms/${slug}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.role).toBe('observer');
  });
});
