/**
 * The state-chart visualizer in Debian's Chromium: a room's actors highlighted live as writes land,
 * every step of a turn shown on the way (settling → sealed → resolved), the timeline stepping back
 * in time, a private room shown only to a credential typed into the page — and the page asking no
 * host but the service, with no console error. On a phone (390 px, touch) the charts open with every
 * label at least 11 px on screen, the page does not scroll sideways, and each chart zooms and pans by
 * its buttons, the keyboard, a mouse drag, one finger and two.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
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

const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 };

/** The smallest on-screen size of any label of the visible charts: font size × the drawing's scale. */
function smallestLabelPx(page: Page): Promise<number> {
  return page.evaluate(() => {
    let smallest = Number.POSITIVE_INFINITY;
    const doc = (globalThis as any).document;
    for (const svg of doc.querySelectorAll('.chart-frame svg')) {
      const rendered = svg.getBoundingClientRect().width;
      if (rendered === 0) continue; // a hidden chart
      const scale = rendered / svg.viewBox.baseVal.width;
      for (const text of svg.querySelectorAll('text')) {
        const size = Number.parseFloat((globalThis as any).getComputedStyle(text).fontSize) * scale;
        smallest = Math.min(smallest, size);
      }
    }
    return smallest;
  });
}

/** The decision chart's frame. */
const frame = '#decision-charts .chart-frame';

/** The zoom level and scroll position of the decision chart's frame, and how wide its drawing is shown. */
function view(page: Page) {
  return page.$eval(frame, (el: any) => ({
    zoom: Number(el.dataset.zoom),
    left: el.scrollLeft,
    top: el.scrollTop,
    svgWidth: el.querySelector('svg').getBoundingClientRect().width,
    frameWidth: el.clientWidth,
  }));
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

  describe('on a phone (390 px wide, touch)', () => {
    let room: SeatedRoom;

    beforeAll(async () => {
      room = await seatedRoom(
        svc.base,
        { question: 'Ship it?', options: ['yes', 'no'], config: { visibility: 'public', voting_window: 600 } },
        2,
      );
    });

    /** The visualizer on the room, in a fresh phone-sized context, once the decision's chart shows its state. */
    async function openOnPhone() {
      const context = await browser.newContext(PHONE);
      const page = await context.newPage();
      await page.goto(`${svc.base}/visualizer?room=${room.slug}`);
      await page.waitForSelector('#decision-charts [data-current="true"]');
      return { context, page };
    }

    it('opens with readable labels and no sideways page scroll', async () => {
      const context = await browser.newContext(PHONE);
      const page = await context.newPage();
      const watch = watchPage(page, svc.base);
      await page.goto(`${svc.base}/visualizer?room=${room.slug}`);
      await page.waitForSelector('#decision-charts [data-current="true"]');
      expect(await smallestLabelPx(page)).toBeGreaterThanOrEqual(11);
      const overflow = await page.evaluate(() => {
        const doc = (globalThis as any).document.documentElement;
        return doc.scrollWidth - doc.clientWidth;
      });
      expect(overflow).toBeLessThanOrEqual(0);
      // The decision chart is wider than the phone: it is framed, not shrunk.
      const start = await view(page);
      expect(start.zoom).toBe(1);
      expect(start.svgWidth).toBeGreaterThan(start.frameWidth);
      // …and scrolled so that the decision's current state is in view.
      const leaf = (await page.locator('#decision-charts [data-current="true"]:not(.compound)').boundingBox())!;
      const shownArea = (await page.locator(frame).boundingBox())!;
      expect(leaf.x).toBeGreaterThanOrEqual(shownArea.x);
      expect(leaf.x + leaf.width).toBeLessThanOrEqual(shownArea.x + shownArea.width);
      expect(leaf.y).toBeGreaterThanOrEqual(shownArea.y);
      expect(leaf.y + leaf.height).toBeLessThanOrEqual(shownArea.y + shownArea.height);
      await page.locator(frame).scrollIntoViewIfNeeded();
      // The whole page, then what the phone's screen shows with the decision chart in view.
      const shown = await screenshot(page, 'visualizer-390');
      await page.screenshot({ path: path.join(path.dirname(shown), 'visualizer-390-decision-chart.png') });
      expect(watch.problems).toEqual([]);
      await context.close();
    });

    it('has no serious or critical accessibility violation (axe-core)', async () => {
      // axe is injected as an inline script, which the page's policy rightly refuses: bypass it here.
      const context = await browser.newContext({ ...PHONE, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(`${svc.base}/visualizer?room=${room.slug}`);
      await page.waitForSelector('#decision-charts [data-current="true"]');
      await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
      const violations = await page.evaluate(async () => {
        const result = await (globalThis as any).axe.run();
        return result.violations
          .filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')
          .map(
            (v: { id: string; nodes: { target: string[] }[] }) =>
              `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          );
      });
      expect(violations).toEqual([]);
      await context.close();
    });

    it('zooms and pans with the buttons, the keyboard and a mouse', async () => {
      const { context, page } = await openOnPhone();
      const toolbar = page.locator('#decision-charts .chart-zoom');

      await toolbar.getByRole('button', { name: 'Zoom in' }).click();
      const zoomed = await view(page);
      expect(zoomed.zoom).toBe(1.25);
      expect(await page.textContent('#decision-charts .zoom-level')).toBe('125%');

      await toolbar.getByRole('button', { name: 'Fit to width' }).click();
      const fitted = await view(page);
      expect(fitted.zoom).toBeLessThan(1);
      expect(fitted.svgWidth).toBeLessThanOrEqual(fitted.frameWidth + 1);

      await toolbar.getByRole('button', { name: 'Reset zoom' }).click();
      expect((await view(page)).zoom).toBe(1);

      // Keyboard: the frame is focusable; arrows pan, + and − zoom, 0 returns to actual size.
      await page.focus(frame);
      const resting = await view(page);
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowUp');
      const panned = await view(page);
      expect(panned.left).toBeLessThan(resting.left);
      expect(panned.top).toBeLessThan(resting.top);
      await page.keyboard.press('+');
      expect((await view(page)).zoom).toBe(1.25);
      await page.keyboard.press('-');
      await page.keyboard.press('-');
      expect((await view(page)).zoom).toBe(0.8);
      await page.keyboard.press('0');
      expect((await view(page)).zoom).toBe(1);

      // A mouse drag pans.
      const box = (await page.locator(frame).boundingBox())!;
      const before = await view(page);
      await page.mouse.move(box.x + box.width - 20, box.y + 60);
      await page.mouse.down();
      await page.mouse.move(box.x + 40, box.y + 60, { steps: 5 });
      await page.mouse.up();
      expect((await view(page)).left).toBeGreaterThan(before.left);
      await context.close();
    });

    it('pans with one finger and zooms with two', async () => {
      const { context, page } = await openOnPhone();
      await page.locator(frame).scrollIntoViewIfNeeded();
      const box = (await page.locator(frame).boundingBox())!;
      const cdp = await context.newCDPSession(page);
      const y = box.y + box.height / 2;
      const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', points: { x: number; y: number }[]) =>
        cdp.send('Input.dispatchTouchEvent', {
          type,
          touchPoints: points.map((p, id) => ({ x: p.x, y: p.y, id })),
        });

      // One finger, right to left: the chart moves with it.
      const before = await view(page);
      const x0 = box.x + box.width - 30;
      await touch('touchStart', [{ x: x0, y }]);
      for (let step = 1; step <= 10; step++) await touch('touchMove', [{ x: x0 - step * 20, y }]);
      await touch('touchEnd', []);
      expect((await view(page)).left).toBeGreaterThan(before.left + 100);

      // Two fingers moving apart: zoom in around their midpoint.
      const mid = box.x + box.width / 2;
      await touch('touchStart', [
        { x: mid - 30, y },
        { x: mid + 30, y },
      ]);
      for (const d of [45, 60, 75, 90]) {
        await touch('touchMove', [
          { x: mid - d, y },
          { x: mid + d, y },
        ]);
      }
      await touch('touchEnd', []);
      expect((await view(page)).zoom).toBeGreaterThan(2);
      await context.close();
    });
  });
});
