/**
 * The state-chart visualizer in Debian's Chromium: a room's actors highlighted live as writes land,
 * every step of a turn shown on the way (settling → sealed → resolved), the timeline stepping back
 * in time, a private room shown only to a credential typed into the page — and the page asking no
 * host but the service, with no console error.
 */
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, serviceAndBrowser, type PageWatch, screenshot, watchPage } from '../support/browser.js';
import { type SeatedRoom, seatedRoom } from '../support/engagement.js';
import { call, type RunningService } from '../support/service.js';

/** The innermost active state of each chart, in page order: what a reader sees highlighted. */
async function leaves(page: Page): Promise<string[]> {
  return page.$$eval('[data-current="true"]:not(.compound)', (nodes) =>
    nodes.map((node) => `${node.getAttribute('data-state')}=${node.textContent}`),
  );
}

describe.skipIf(!hasChromium)('the visualizer in a browser', () => {
  const clock = new ManualClock();
  const suite = serviceAndBrowser(clock);
  let svc: RunningService;
  let browser: Browser;
  let room: SeatedRoom;

  beforeAll(async () => {
    ({ svc, browser } = suite);
    room = await seatedRoom(
      svc.base,
      {
        question: 'Ship <b>it</b>?',
        options: ['yes', 'no'],
        config: { visibility: 'public', early_close: true, settle_window: 5, voting_window: 600 },
      },
      3,
    );
  });

  it('follows a decision live through every state, and steps back in time', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const watch: PageWatch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/visualizer?room=${room.slug}`);
    await page.waitForSelector('[data-chart="decision"] [data-current="true"]');
    expect(await leaves(page)).toEqual(['room.active.deciding=deciding', 'decision.voting.open=open']);
    // Each highlighted state is marked for assistive tech too.
    expect(
      await page.$$eval('[data-current="true"]', (nodes) => nodes.map((n) => n.getAttribute('aria-current'))),
    ).toEqual(['step', 'step', 'step', 'step']);

    // Record every change of the decision's highlighted state, with the time it showed.
    await page.evaluate(() => {
      const seen: { state: string; at: number }[] = [];
      (globalThis as any).seen = seen;
      const note = () => {
        const leaf = (globalThis as any).document.querySelector(
          '#decision-charts [data-current="true"]:not(.compound)',
        );
        const state = leaf?.getAttribute('data-state') ?? '';
        if (seen.at(-1)?.state !== state) seen.push({ state, at: Date.now() });
      };
      note();
      new (globalThis as any).MutationObserver(note).observe(
        (globalThis as any).document.getElementById('decision-charts')!,
        {
          attributes: true,
          subtree: true,
          attributeFilter: ['data-current'],
        },
      );
    });
    const seen = () => page.evaluate(() => (globalThis as any).seen as { state: string; at: number }[]);
    const waitFor = (state: string) =>
      page.waitForFunction((s) => (globalThis as any).seen.some((x: { state: string }) => x.state === s), state);

    await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token: room.tokens[0], body: { choice: 'yes' } });
    const determining = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
      token: room.tokens[1],
      body: { choice: 'yes' },
    });
    const acknowledged = Date.now();
    expect(determining.body.settling).toBeTruthy();
    await waitFor('decision.voting.settling');
    const settlingShownAfter = (await seen()).find((s) => s.state === 'decision.voting.settling')!.at - acknowledged;

    clock.advance(6_000);
    const sealedAt = Date.now();
    await svc.service.scheduler.runDue();
    await waitFor('decision.resolved');
    const shown = await seen();
    expect(shown.map((s) => s.state)).toEqual([
      'decision.voting.open',
      'decision.voting.settling',
      'decision.sealed',
      'decision.resolved',
    ]);
    const resolvedShownAfter = shown.at(-1)!.at - sealedAt;
    await page.waitForFunction(() =>
      /through event/.test((globalThis as any).document.getElementById('mode')?.textContent ?? ''),
    );
    console.log(
      `visualizer: settling shown ${settlingShownAfter} ms after the choose's 2xx; sealed → resolved shown ${resolvedShownAfter} ms after the seal`,
    );
    expect(await leaves(page)).toEqual(['room.active.open=open', 'decision.resolved=resolved']);
    await screenshot(page, 'visualizer-live-resolved');

    // The timeline: one entry per machine step, in order; selecting one shows that moment.
    const entries = await page.$$eval('[data-timeline-entry]', (nodes) => nodes.map((n) => n.textContent ?? ''));
    expect(entries.map((text) => text.replace(/^#\d+ /, '').replace(/:.*→ /, ' → '))).toEqual([
      'decision.opened → voting › open (always)',
      'decision.opened → active › deciding (always [hasOpenDecisions])',
      'vote.cast → voting › settling (D.EVALUATE [determined])',
      'decision.completed → sealed (D.ADVANCE [settleDue])',
      'decision.completed → resolved (D.RECEIPT)',
      'decision.completed → active › open (always [noOpenDecisions])',
    ]);
    await page.locator('[data-timeline-entry]').nth(2).click();
    expect(await leaves(page)).toEqual(['room.active.deciding=deciding', 'decision.voting.settling=settling']);
    expect(await page.textContent('#mode')).toContain('Time travel');
    await screenshot(page, 'visualizer-time-travel-settling');
    // The timeline is keyboard-operable: focus an entry and press Enter.
    await page.locator('[data-timeline-entry]').nth(3).focus();
    await page.keyboard.press('Enter');
    expect(await leaves(page)).toEqual(['room.active.deciding=deciding', 'decision.sealed=sealed']);
    await page.click('#go-live');
    expect(await leaves(page)).toEqual(['room.active.open=open', 'decision.resolved=resolved']);

    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    expect(watch.requests.some((url) => url.includes('token'))).toBe(false);
    await page.close();
  });

  it('shows a private room only to a credential typed into the page, never putting it in a URL', async () => {
    const hidden = await seatedRoom(
      svc.base,
      { question: 'Private matter?', options: ['a', 'b'], config: { visibility: 'private' } },
      1,
    );
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/visualizer?room=${hidden.slug}`);
    await page.waitForFunction(() =>
      /credential/.test((globalThis as any).document.getElementById('status')?.textContent ?? ''),
    );
    expect(await page.textContent('#status')).toContain('This room is private. Join it to read it');
    expect(await page.$$('[data-current="true"]')).toHaveLength(0);
    expect(await page.$$('[data-timeline-entry]')).toHaveLength(0);
    await screenshot(page, 'visualizer-private-without-credential');

    await page.fill('#room-token', hidden.tokens[0]!);
    await page.click('#open-room');
    await page.waitForSelector('[data-chart="decision"] [data-current="true"]');
    expect(await leaves(page)).toEqual(['room.active.deciding=deciding', 'decision.voting.open=open']);
    expect(page.url()).toBe(`${svc.base}/visualizer?room=${hidden.slug}`);
    expect(watch.requests.filter((url) => url.includes(hidden.tokens[0]!))).toEqual([]);
    // The page learned from the room page that it needs a credential: no refused read was sent.
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('draws both charts from the machine definitions, with a text alternative', async () => {
    const page = await browser.newPage();
    await page.goto(`${svc.base}/visualizer`);
    const states = await page.$$eval('[data-chart="decision"] [data-state]', (nodes) =>
      nodes.map((n) => n.getAttribute('data-state')),
    );
    expect(states).toEqual(
      expect.arrayContaining([
        'decision.proposing',
        'decision.voting.open',
        'decision.voting.settling',
        'decision.sealed',
      ]),
    );
    expect(await page.textContent('details')).toContain('D.ADVANCE [settleDue]');
    await page.close();
  });
});
