/**
 * docs/events.md as a browser uses it: Chromium's own `EventSource` on a public room's stream, with
 * a listener for each event name the page lists, receives every event of a room that goes through
 * every event type (the same events, in the same order, as the replay), while `onmessage` receives
 * none, as the page says. The page's table, its snippet's list and the service's event schema name
 * the same types.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { roomEventSchema } from '../../src/domain/views/event-schemas.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, serviceAndBrowser } from '../support/browser.js';
import { repoRoot } from '../support/built.js';
import { call } from '../support/service.js';

const SCHEMA_TYPES = roomEventSchema.options.map((option) => option.shape.event_type.value as string);

/** The event names of docs/events.md: its table's first column, and its snippet's EVENT_TYPES. */
async function documentedTypes(): Promise<{ table: string[]; snippet: string[] }> {
  const page = await readFile(path.join(repoRoot, 'docs/events.md'), 'utf8');
  const section = page.slice(page.indexOf('## Every event'), page.indexOf('## Server-sent events'));
  const table = [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((match) => match[1]!);
  const list = /const EVENT_TYPES = \[([^\]]*)\]/.exec(page)?.[1] ?? '';
  const snippet = [...list.matchAll(/'([a-z_.]+)'/g)].map((match) => match[1]!);
  return { table, snippet };
}

describe.skipIf(!hasChromium)('room events through EventSource (docs/events.md)', () => {
  const clock = new ManualClock(Date.parse('2026-06-01T09:00:00.000Z'));
  const suite = serviceAndBrowser(clock);
  let types: string[];

  beforeAll(async () => {
    const documented = await documentedTypes();
    types = documented.table;
    expect(documented.snippet).toEqual(documented.table);
  });

  it('lists every event type of the service, once', () => {
    expect([...types].sort()).toEqual([...SCHEMA_TYPES].sort());
  });

  it('delivers every event of a room to the documented listeners, and none to onmessage', async () => {
    const base = suite.svc.base;
    const post = async (method: string, url: string, token: string | undefined, body?: unknown) => {
      const answer = await call(base, method, url, { token, ...(body !== undefined ? { body } : {}) });
      expect(answer.status, `${method} ${url}: ${answer.text}`).toBe(200);
      return answer.body;
    };
    const created = await post('POST', '/api/rooms', undefined, {
      question: 'Lunch?',
      options: ['pizza', 'sushi'],
      display_name: 'host',
      config: { visibility: 'public', early_close: true, settle_window: 0, max_open_decisions: 2 },
    });
    const slug = created.slug as string;
    const host = created.creator_token as string;
    const room = `/api/rooms/${slug}`;

    const page = await suite.browser.newPage();
    await page.goto(`${base}/`);
    // From the first event on: the stream replays the two events of the creation, then goes live.
    await page.evaluate(
      ({ url, names }) => {
        const seen: { name: string; seq: number; id: string; lastEventId: string }[] = [];
        const state = { seen, messages: 0, open: false };
        (globalThis as unknown as { sse: typeof state }).sse = state;
        const source = new EventSource(url);
        source.onopen = () => {
          state.open = true;
        };
        source.onmessage = () => {
          state.messages += 1;
        };
        for (const name of names) {
          source.addEventListener(name, (frame) => {
            const event = JSON.parse((frame as MessageEvent).data);
            seen.push({ name, seq: event.seq, id: event.id, lastEventId: (frame as MessageEvent).lastEventId });
            if (name === 'room.concluded') source.close();
          });
        }
      },
      { url: `${base}${room}/events/stream?since_seq=0`, names: types },
    );
    await page.waitForFunction(() => (globalThis as unknown as { sse: { open: boolean } }).sse.open);

    // Every kind of event, live.
    const invite = await post('POST', `${room}/invites`, host, { label: 'guest' });
    const guest = (
      await post('POST', `${room}/join`, undefined, { invite: invite.invite_token, display_name: 'guest' })
    ).participant_token as string;
    const second = await post('POST', `${room}/invites`, host, { label: 'nobody' });
    await post('DELETE', `${room}/invites/${second.code ?? second.invite?.code}`, host);
    await post('POST', `${room}/join`, undefined, { display_name: 'watcher' });
    await post('PATCH', `${room}/members/watcher`, host, { role: 'observer' });
    await post('PATCH', `${room}/settings`, host, { settings: { max_options: 50 } });
    await post('POST', `${room}/ask`, host, { question: 'Dessert?', proposal_window: 600 });
    await post('POST', `${room}/options`, guest, { option: 'cake', decision: 2 });
    await post('POST', `${room}/start-choosing`, host, { decision: 2 });
    await post('POST', `${room}/discuss`, guest, { body: 'Pizza is faster', stance: 'agree' });
    await post('POST', `${room}/choose`, guest, { choice: 'pizza', decision: 1 });
    await post('POST', `${room}/abstain`, host, { reason: 'either is fine', decision: 1 });
    await post('POST', `${room}/choose`, guest, { choice: 'cake', decision: 2 });
    await post('POST', `${room}/abstain`, host, { reason: 'no preference', decision: 2 });
    await post('POST', `${room}/close`, host, { statement: 'Thanks' });

    await page.waitForFunction(
      () =>
        (globalThis as unknown as { sse: { seen: { name: string }[] } }).sse.seen.some(
          (e) => e.name === 'room.concluded',
        ),
      undefined,
      { timeout: 20_000 },
    );
    const { seen, messages } = await page.evaluate(
      () => (globalThis as unknown as { sse: { seen: unknown[]; messages: number } }).sse,
    );
    const replay = await call(base, 'GET', `${room}/events?since_seq=0&limit=1000`);
    const stored = (replay.body.events as { id: string; seq: number; event_type: string }[]).map((event) => ({
      name: event.event_type,
      seq: event.seq,
      id: event.id,
      lastEventId: event.id,
    }));
    expect(seen).toEqual(stored);
    expect(new Set(stored.map((event) => event.name))).toEqual(new Set(types));
    expect(messages).toBe(0);
    await page.close();
  });
});
