/**
 * docs/configuration.md, checked against the running service: every room setting the reference
 * describes has a check here that drives the real service over HTTP (real SQLite, a manual clock)
 * and shows the described behaviour; each documented default is what a new room resolves to, and
 * each "Changeable" column is what the settings route accepts. A setting documented without a check
 * here fails the suite, as does a check for a setting the reference no longer describes.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const SECOND = 1000;

interface Documented {
  key: string;
  default: unknown;
  changeable: boolean;
}

/** The reference's table: one row per key, with its default (JSON) and whether settings may change it. */
function documentedKeys(markdown: string): Documented[] {
  return [...markdown.matchAll(/^\| `([a-z_]+)` \|[^|]*\|[^|]*\| `(.+?)` \| (yes|no) \|$/gm)].map(
    ([, key, def, ch]) => ({
      key: key ?? '',
      default: JSON.parse(def ?? 'null'),
      changeable: ch === 'yes',
    }),
  );
}

describe('docs/configuration.md agrees with the service, setting by setting', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  let documented: Documented[];
  let sections: Map<string, string>;
  beforeAll(async () => {
    svc = await startService({ clock });
    const markdown = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    documented = documentedKeys(markdown);
    sections = new Map(
      [...markdown.matchAll(/^## `([a-z_]+)`\n([\s\S]*?)(?=^## )/gm)].map(([, key, text]) => [key ?? '', text ?? '']),
    );
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const post = (path: string, body: unknown, token?: string) => call(svc.base, 'POST', path, { token, body });
  const get = (path: string, token?: string) => call(svc.base, 'GET', path, { token });

  /** A room whose first decision asks about drinks, with `members` seats (the creator first). */
  async function room(config: Record<string, unknown>, members = 1, extra: Record<string, unknown> = {}) {
    clock.set(T0);
    const created = await post('/api/rooms', {
      question: 'What do we drink?',
      options: ['tea', 'coffee', 'water'],
      config,
      ...extra,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const slug = created.body.slug as string;
    const tokens = [created.body.creator_token as string];
    for (let i = 1; i < members; i++) tokens.push(await join(slug));
    return { slug, tokens, created: created.body };
  }

  /** A room with no decision yet (an about text only). */
  async function bareRoom(config: Record<string, unknown>, members = 1) {
    clock.set(T0);
    const created = await post('/api/rooms', { about: 'Weekly planning', config });
    expect(created.status).toBe(200);
    const slug = created.body.slug as string;
    const tokens = [created.body.creator_token as string];
    for (let i = 1; i < members; i++) tokens.push(await join(slug));
    return { slug, tokens };
  }

  async function join(slug: string, body: Record<string, unknown> = {}): Promise<string> {
    const joined = await post(`/api/rooms/${slug}/join`, body);
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    return joined.body.participant_token;
  }

  const choose = (slug: string, token: string, choice: unknown) => post(`/api/rooms/${slug}/choose`, { choice }, token);
  const discuss = (slug: string, token: string) => post(`/api/rooms/${slug}/discuss`, { body: 'I like tea.' }, token);
  const ask = (slug: string, token: string, extra: Record<string, unknown> = {}) =>
    post(`/api/rooms/${slug}/ask`, { question: 'And what do we eat?', options: ['bread', 'rice'], ...extra }, token);
  const decisionsOf = async (slug: string, token: string) =>
    (await get(`/api/rooms/${slug}/decisions`, token)).body.decisions as any[];
  const refusal = (response: { status: number; body: any }) => [response.status, response.body?.error?.code];

  const CHECKS: Record<string, () => Promise<void>> = {
    async type() {
      // ephemeral: once a decision sealed, reads stop offering ask, yet an explicit ask still opens one.
      const one = await room({ early_close: true, settle_window: 0 });
      expect((await choose(one.slug, one.tokens[0]!, 'tea')).body.status).toBe('resolved');
      expect((await get(`/api/rooms/${one.slug}`, one.tokens[0])).body.more.ask).toBeUndefined();
      expect((await ask(one.slug, one.tokens[0]!)).status).toBe(200);
      // persistent: ask stays offered after a seal.
      const standing = await room({ type: 'persistent', early_close: true, settle_window: 0 });
      expect((await choose(standing.slug, standing.tokens[0]!, 'tea')).body.status).toBe('resolved');
      expect((await get(`/api/rooms/${standing.slug}`, standing.tokens[0])).body.more.ask).toBeDefined();
    },
    async visibility() {
      const pub = await room({ visibility: 'public' });
      expect((await get(`/api/rooms/${pub.slug}`)).status).toBe(200);
      const unlisted = await room({ visibility: 'unlisted' });
      const outsider = await get(`/api/rooms/${unlisted.slug}`);
      expect(refusal(outsider)).toEqual([403, 'room.join_required']);
      expect(outsider.body.error.details).toEqual({
        slug: unlisted.slug,
        visibility: 'unlisted',
        join_required: true,
        password_supported: false,
      });
      const member = await join(unlisted.slug);
      expect((await get(`/api/rooms/${unlisted.slug}`, member)).status).toBe(200);
      const priv = await room({ visibility: 'private' }, 1, { password: 'correct horse battery' });
      expect(refusal(await get(`/api/rooms/${priv.slug}`))).toEqual([403, 'room.join_required']);
      expect(refusal(await post(`/api/rooms/${priv.slug}/join`, {}))).toEqual([403, 'room.invite_required']);
      const invited = await post(`/api/rooms/${priv.slug}/invites`, { label: 'Bea' }, priv.tokens[0]);
      await join(priv.slug, { invite: invited.body.invite_token });
      await join(priv.slug, { password: 'correct horse battery' });
      // A password alone makes a room private.
      const implied = await room({}, 1, { password: 'correct horse battery' });
      expect(implied.created.config.visibility).toBe('private');
    },
    async mechanism() {
      const single = await room({});
      expect((await choose(single.slug, single.tokens[0]!, 'tea')).status).toBe(200);
      expect((await choose(single.slug, single.tokens[0]!, ['tea', 'coffee'])).status).toBe(400);
      const approval = await room({ mechanism: 'approval' });
      expect((await choose(approval.slug, approval.tokens[0]!, ['tea', 'coffee'])).status).toBe(200);
      const score = await room({ mechanism: 'score_vote' });
      expect((await choose(score.slug, score.tokens[0]!, { tea: 5, coffee: 1 })).status).toBe(200);
      expect(refusal(await post('/api/rooms', { about: 'x', config: { mechanism: 'budget_allocation' } }))).toEqual([
        400,
        'input.invalid',
      ]);
    },
    async invite_authority() {
      const { slug, tokens } = await bareRoom({}, 2);
      expect(refusal(await post(`/api/rooms/${slug}/invites`, { label: 'Cy' }, tokens[1]))).toEqual([
        403,
        'authority.denied',
      ]);
      expect((await post(`/api/rooms/${slug}/invites`, { label: 'Cy' }, tokens[0])).status).toBe(200);
    },
    async option_proposal_authority() {
      const open = await room({}, 2);
      expect((await post(`/api/rooms/${open.slug}/options`, { option: 'juice' }, open.tokens[1])).status).toBe(200);
      const closed = await room({ option_proposal_authority: { kind: 'none' } }, 2);
      expect((await post(`/api/rooms/${closed.slug}/options`, { option: 'juice' }, closed.tokens[0])).status).toBe(403);
      expect((await decisionsOf(closed.slug, closed.tokens[0]!))[0].proposals_open).toBe(false);
    },
    async decision_opening_authority() {
      const anyone = await bareRoom({}, 2);
      expect((await ask(anyone.slug, anyone.tokens[1]!)).status).toBe(200);
      const host = await bareRoom({ decision_opening_authority: { kind: 'operator' } }, 2);
      expect(refusal(await ask(host.slug, host.tokens[1]!))).toEqual([403, 'authority.denied']);
      const slate = await ask(host.slug, host.tokens[0]!, { options: [], proposal_window: 600 });
      expect(slate.body.decision.status).toBe('proposing');
      await post(`/api/rooms/${host.slug}/options`, { option: 'soup' }, host.tokens[1]);
      const start = `/api/rooms/${host.slug}/start-choosing`;
      expect(refusal(await post(start, {}, host.tokens[1]))).toEqual([403, 'authority.denied']);
      expect((await post(start, {}, host.tokens[0])).body.decision.status).toBe('voting');
    },
    async conclusion_authority() {
      const { slug, tokens } = await bareRoom({}, 2);
      expect(refusal(await post(`/api/rooms/${slug}/close`, {}, tokens[1]))).toEqual([403, 'authority.denied']);
      expect((await post(`/api/rooms/${slug}/close`, {}, tokens[0])).status).toBe(200);
    },
    async auth() {
      const mandates = await bareRoom({ auth: 'mandate_required' });
      expect(refusal(await post(`/api/rooms/${mandates.slug}/join`, {}))).toEqual([401, 'auth.mandate_required']);
      const tokens = await bareRoom({ auth: 'token_only' });
      await join(tokens.slug);
    },
    async quorum() {
      const { slug, tokens } = await room({ quorum: 2 });
      expect((await choose(slug, tokens[0]!, 'tea')).body.status).toBe('voting');
      clock.set(T0 + 3600 * SECOND);
      expect((await decisionsOf(slug, tokens[0]!))[0]).toMatchObject({
        status: 'resolved',
        outcome_status: 'no_quorum',
      });
    },
    async voting_window() {
      const { slug, tokens, created } = await room({ voting_window: 120 });
      expect(Date.parse(created.voting_ends_at)).toBe(T0 + 120 * SECOND);
      await call(svc.base, 'PATCH', `/api/rooms/${slug}/settings`, {
        token: tokens[0],
        body: { settings: { voting_window: 600, max_open_decisions: 2 } },
      });
      // The open decision keeps its window; the next one takes the new one.
      expect(Date.parse((await decisionsOf(slug, tokens[0]!))[0].voting_ends_at)).toBe(T0 + 120 * SECOND);
      expect(Date.parse((await ask(slug, tokens[0]!)).body.decision.voting_ends_at)).toBe(T0 + 600 * SECOND);
    },
    async deliberation_mode() {
      const talk = await room({});
      expect((await discuss(talk.slug, talk.tokens[0]!)).status).toBe(200);
      const quiet = await room({ deliberation_mode: 'disabled' });
      expect((await discuss(quiet.slug, quiet.tokens[0]!)).status).toBe(400);
    },
    async max_participants() {
      const { slug } = await bareRoom({ max_participants: 2 });
      await join(slug);
      expect(refusal(await post(`/api/rooms/${slug}/join`, {}))).toEqual([409, 'room.at_capacity']);
    },
    async max_options() {
      const { slug, tokens } = await room({ max_options: 3 });
      expect(refusal(await post(`/api/rooms/${slug}/options`, { option: 'juice' }, tokens[0]))).toEqual([
        400,
        'input.invalid',
      ]);
    },
    async max_deliberation_messages_per_participant() {
      const { slug, tokens } = await room({ max_deliberation_messages_per_participant: 1 }, 2);
      expect((await discuss(slug, tokens[0]!)).status).toBe(200);
      expect(refusal(await discuss(slug, tokens[0]!))).toEqual([400, 'input.invalid']);
      expect((await discuss(slug, tokens[1]!)).status).toBe(200);
    },
    async max_total_deliberation_messages() {
      const { slug, tokens } = await room({ max_total_deliberation_messages: 1 }, 2);
      expect((await discuss(slug, tokens[0]!)).status).toBe(200);
      expect(refusal(await discuss(slug, tokens[1]!))).toEqual([400, 'input.invalid']);
    },
    async read_receipts() {
      const off = await room({});
      const full = (slug: string, token: string) => get(`/api/rooms/${slug}?include=full`, token);
      expect((await full(off.slug, off.tokens[0]!)).body.participants[0].last_seen_at).toBeNull();
      const on = await room({ read_receipts: true });
      expect((await full(on.slug, on.tokens[0]!)).body.participants[0].last_seen_at).toBeTypeOf('string');
    },
    async choice_visibility() {
      const shown = async (config: Record<string, unknown>) => {
        const { slug, tokens } = await room({ ...config, early_close: true, settle_window: 0 }, 2);
        await choose(slug, tokens[0]!, 'tea');
        const during = (await get(`/api/rooms/${slug}`, tokens[1])).body.choices;
        await choose(slug, tokens[1]!, 'tea');
        const after = (await get(`/api/rooms/${slug}?include=full`, tokens[1])).body;
        return { during, after };
      };
      expect((await shown({})).during).not.toBeNull();
      const later = await shown({ choice_visibility: 'after_decided' });
      expect(later.during).toBeNull();
      expect(JSON.stringify(later.after)).toContain('"tea"');
      const never = await shown({ choice_visibility: 'never' });
      expect(never.during).toBeNull();
    },
    async early_close() {
      const runs = await room({}, 2);
      await choose(runs.slug, runs.tokens[0]!, 'tea');
      expect((await choose(runs.slug, runs.tokens[1]!, 'tea')).body.status).toBe('voting');
      const ends = await room({ early_close: true, settle_window: 0 }, 2);
      await choose(ends.slug, ends.tokens[0]!, 'tea');
      expect((await choose(ends.slug, ends.tokens[1]!, 'tea')).body.status).toBe('resolved');
    },
    async settle_window() {
      const { slug, tokens } = await room({ early_close: true });
      const chosen = await choose(slug, tokens[0]!, 'tea');
      expect(chosen.body.settling).toMatchObject({ seals_in_seconds: 45 });
      clock.advance(44 * SECOND);
      expect((await decisionsOf(slug, tokens[0]!))[0].status).toBe('voting');
      clock.advance(1 * SECOND);
      expect((await decisionsOf(slug, tokens[0]!))[0].status).toBe('resolved');
    },
    async creator_votes() {
      const { slug, tokens } = await room({ creator_votes: false, early_close: true, settle_window: 0 }, 2);
      expect(refusal(await choose(slug, tokens[0]!, 'tea'))).toEqual([403, 'choice.not_eligible']);
      expect((await choose(slug, tokens[1]!, 'tea')).body.status).toBe('resolved');
    },
    async max_open_decisions() {
      const one = await room({});
      expect(refusal(await ask(one.slug, one.tokens[0]!))).toEqual([409, 'decision.already_open']);
      const two = await room({ max_open_decisions: 2 });
      expect((await ask(two.slug, two.tokens[0]!)).status).toBe(200);
    },
  };

  it('describes exactly the settings checked here, each in its own section', () => {
    expect(documented.map((d) => d.key).sort()).toEqual(Object.keys(CHECKS).sort());
    expect([...sections.keys()].sort()).toEqual(Object.keys(CHECKS).sort());
  });

  /** What the reference says that the checks below show, in its own words. */
  const SAYS: Record<string, RegExp[]> = {
    type: [/once one has sealed, reads stop offering ask/, /an explicit authorized ask still opens another/],
    visibility: [
      /No room is listed anywhere/,
      /public rooms are readable by anyone with the slug, without joining/,
      /only members read them \(others get room\.join_required\)/,
      /A room created with a password defaults to private/,
    ],
    invite_authority: [/Default: `\{"kind":"operator"\}`/],
    auth: [/joining without one is refused/],
    quorum: [/resolves without a winner/],
    voting_window: [/A change applies to decisions opened afterwards/],
    deliberation_mode: [/disabled refuses discuss/],
    max_participants: [/room\.at_capacity/],
    read_receipts: [/when false it is always null/],
    choice_visibility: [/after_decided \(once the decision seals\)/],
    early_close: [/when false it runs to the end of voting_window/],
    creator_votes: [/cannot choose/],
    max_open_decisions: [/decision\.already_open/],
  };

  it('says in each section what the checks show', () => {
    for (const [key, claims] of Object.entries(SAYS)) {
      for (const claim of claims) expect(sections.get(key), key).toMatch(claim);
    }
  });

  it('documents the defaults a new room resolves to, and which settings can change', async () => {
    const { slug, tokens, created } = await room({});
    for (const d of documented) {
      expect(created.config[d.key], d.key).toEqual(d.default);
      const value = created.config[d.key];
      const changed = await call(svc.base, 'PATCH', `/api/rooms/${slug}/settings`, {
        token: tokens[0],
        body: { settings: { [d.key]: value } },
      });
      expect(changed.status, `${d.key}: ${JSON.stringify(changed.body)}`).toBe(d.changeable ? 200 : 400);
    }
  });

  // Each documented setting, driven through the service as the reference describes it.
  for (const key of Object.keys(CHECKS)) {
    it(`${key} behaves as described`, async () => {
      await CHECKS[key]!();
    });
  }
});
