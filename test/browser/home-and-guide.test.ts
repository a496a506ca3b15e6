/**
 * Issue 43, the home form and the guide, in Chromium: both fit a 360 px phone and a 1280 px desktop
 * without horizontal scroll and with no axe violation; the guide renders every document as HTML with
 * a table of contents and navigation; the home form says its defaults, creates what it says (a room
 * with no options collects proposals first) and shows a refusal in plain words beside the field, with
 * focus there.
 */
// Functions passed to page.evaluate run in the browser; these files are typed for Node.
declare const document: any;
import { readdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { seriousViolations } from '../support/axe.js';
import { hasChromium, screenshot, serviceAndBrowser, watchPage } from '../support/browser.js';
import { call, type RunningService } from '../support/service.js';
import { seatToken } from '../support/take-part.js';

const WIDTHS = [360, 1280] as const;

/** How far the page reaches past the viewport's right edge (0 when nothing scrolls sideways). */
async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

const docs = async () =>
  (await readdir(new URL('../../docs/', import.meta.url))).filter((f) => /^[a-z].*\.md$/.test(f));

describe.skipIf(!hasChromium)('the home form and the guide', () => {
  const suite = serviceAndBrowser(new ManualClock());
  let svc: RunningService;
  let browser: Browser;
  beforeAll(() => {
    ({ svc, browser } = suite);
  });

  it('renders every guide document as HTML with contents and navigation; programs still get the Markdown', async () => {
    const files = await docs();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const watch = watchPage(page, svc.base);
    const front = await page.goto(`${svc.base}/guide`);
    expect(front?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.textContent('h1')).toBe('The Conclave guide');
    for (const file of files) {
      expect(await page.$$(`nav.guide-nav a[href="/guide/${file}"]`), file).toHaveLength(1);
    }
    // In reading order (the front page's), not by file name; the contents sit under the title.
    expect(await page.$eval('nav.guide-nav li a', (a: any) => a.getAttribute('href'))).toBe('/guide/concepts.md');
    await page.goto(`${svc.base}/guide/configuration.md`);
    expect(await page.$$('article h1 + nav.guide-toc')).toHaveLength(1);
    await page.goto(`${svc.base}/guide`);
    for (const file of files) {
      const response = await page.goto(`${svc.base}/guide/${file}`);
      expect(response?.headers()['content-type'], file).toMatch(/^text\/html/);
      // Rendered, not raw: a heading element, no Markdown heading markers or table pipes left as text.
      expect(await page.$$('article h1'), file).toHaveLength(1);
      const prose = await page.$$eval('article p', (ps: any[]) => ps.map((p) => p.textContent).join('\n'));
      expect(prose, file).not.toMatch(/^#{1,3} /m);
      expect(prose, file).not.toContain('|---|');
      expect(await page.$eval('nav.guide-nav [aria-current="page"]', (a: any) => a.getAttribute('href'))).toBe(
        `/guide/${file}`,
      );
      expect(await page.$$('nav.guide-pager a'), file).not.toHaveLength(0);
    }
    // The table of contents links to the sections, and links between documents stay inside the guide.
    await page.goto(`${svc.base}/guide/how-decisions-end.md`);
    const toc = await page.$$eval('nav.guide-toc a', (links: any[]) => links.map((a) => a.getAttribute('href')));
    expect(toc.length).toBeGreaterThan(5);
    for (const href of toc) expect(await page.$$(`article [id="${href.slice(1)}"]`), href).toHaveLength(1);
    await page.goto(`${svc.base}/guide/configuration.md`);
    expect(await page.$$('main a[href="/guide/configuration.md"]')).toHaveLength(1);
    await page.goto(`${svc.base}/guide/concepts.md`);
    const hrefs = await page.$$eval('article a', (links: any[]) => links.map((a) => a.getAttribute('href')));
    expect(hrefs.filter((h: string) => h.endsWith('.md') || h.includes('.md#'))).not.toHaveLength(0);
    for (const href of hrefs) expect(href, 'a link inside docs/').toMatch(/^(?:\/guide|#|https?:)/);
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();

    const markdown = await fetch(`${svc.base}/guide/configuration.md`);
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await markdown.text()).toMatch(/^# Room configuration/);
  });

  for (const width of WIDTHS) {
    it(`fits the home page and the guide in ${width} px without sideways scrolling, with no axe violation`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 800 } });
      const watch = watchPage(page, svc.base);
      for (const [name, path] of [
        ['home', '/'],
        ['guide', '/guide'],
        ['guide-configuration', '/guide/configuration.md'],
        ['guide-how-decisions-end', '/guide/how-decisions-end.md'],
        ['guide-architecture', '/guide/architecture.md'],
      ] as const) {
        await page.goto(`${svc.base}${path}`);
        if (name === 'home') await page.waitForSelector('#create-room');
        expect(await overflow(page), `${path} at ${width} px`).toBeLessThanOrEqual(0);
        expect(await seriousViolations(page), `${path} at ${width} px`).toEqual([]);
        if (name === 'home' || name === 'guide-configuration') await screenshot(page, `${name}-${width}`);
      }
      expect(watch.problems).toEqual([]);
      await page.close();
    });
  }

  it('shows a too-short question in plain words beside the field, with focus on it', async () => {
    const page = await browser.newPage({ viewport: { width: 360, height: 800 } });
    await page.goto(`${svc.base}/`);
    await page.waitForSelector('#create-room');
    expect(await page.$$('#create-room[novalidate]')).toHaveLength(0);
    await page.fill('#question', 'ab');
    await page.click('#create-room button[type="submit"]');
    await page.waitForSelector('#question-error:not([hidden])');
    const message = (await page.textContent('#question-error')) ?? '';
    expect(message).toContain('too short');
    expect(message).not.toMatch(/[{}]|\/api\/|POST|create_room|input\.invalid/);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('question');
    expect(await page.getAttribute('#question', 'aria-describedby')).toContain('question-error');
    expect(await page.getAttribute('#question', 'aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    // Spaces do not make a question long enough either (the browser counts them; the page does not).
    await page.fill('#question', '  a  ');
    await page.click('#create-room button[type="submit"]');
    await page.waitForSelector('#question-error:not([hidden])');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('question');
    // Typing clears the message; no room was created along the way.
    await page.fill('#question', 'Where do we meet?');
    expect(await page.isHidden('#question-error')).toBe(true);
    expect(page.url()).toBe(`${svc.base}/`);
    await screenshot(page, 'home-question-too-short-360');
    // A refusal only the service can make (a name kept for its own roles) lands beside its field too.
    await page.fill('#display_name', 'admin');
    await page.click('#create-room button[type="submit"]');
    await page.waitForSelector('#display_name-error:not([hidden])');
    const refused = (await page.textContent('#display_name-error')) ?? '';
    expect(refused).toContain('This name cannot be used');
    expect(`${refused} ${await page.textContent('#create-status')}`).not.toMatch(
      /[{}]|\/api\/|POST|create_room|input\.invalid|The field/,
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('display_name');
    expect(page.url()).toBe(`${svc.base}/`);
    await page.close();
  });

  /** The home page in a fresh browser context (its own seat store) at `width`. */
  async function home(width: number) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${svc.base}/`);
    await page.waitForSelector('#create-room');
    return { context, page };
  }

  /** Submits the form and reads the room it created with the creator's seat. */
  async function submit(page: Page) {
    await page.click('#create-room button[type="submit"]');
    await page.waitForURL(/\/r\/[a-z0-9]+$/);
    const slug = new URL(page.url()).pathname.split('/').at(-1)!;
    const token = await seatToken(page, slug);
    const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token });
    return { slug, token, room: room.body };
  }

  it('explains each default, and creates the room the form describes', async () => {
    const { context, page } = await home(1280);
    const form = (await page.textContent('#create-room')) ?? '';
    expect(form).toContain('Secret ballot');
    expect(form).toMatch(/Quorum/);
    expect(form).toContain('A standing room');
    expect(form).toContain('I vote too (default: on)');
    expect(await page.textContent('#ends-summary')).toContain('1 hour and the vote ends when that time is up');
    await page.fill('#question', 'Which venue?');
    await page.fill('#options', 'hall\nroof');
    await page.check('input[name="choice_visibility"][value="never"]');
    await page.check('input[name="type"][value="persistent"]');
    await page.uncheck('#creator_votes');
    await page.fill('#quorum', '3');
    const { room } = await submit(page);
    expect(room.config).toMatchObject({
      choice_visibility: 'never',
      type: 'persistent',
      creator_votes: false,
      quorum: 3,
    });
    expect(room.status).toBe('voting');
    await context.close();
  });

  it('collects proposals first when the options are left empty, until the host starts choosing', async () => {
    const { context, page } = await home(360);
    expect(await page.textContent('#options-help')).toContain('choosing opens when the host starts it');
    await page.fill('#question', 'What should we read next?');
    const { slug, token, room } = await submit(page);
    expect(room.status).toBe('proposing');
    const decisions = await call(svc.base, 'GET', `/api/rooms/${slug}/decisions`, { token });
    const decision = decisions.body.decisions[0];
    expect(decision).toMatchObject({ question: 'What should we read next?', status: 'proposing', options: [] });
    // Collecting lasts the form's default (a day) before choosing can open by itself.
    expect(Date.parse(decision.voting_opens_at) - Date.parse(room.created_at)).toBe(86_400_000);
    // A choice is refused while proposals are collected; proposals are taken.
    const early = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 1 } });
    expect(early.body.error.code).toBe('decision.proposing');
    await page.fill('#propose-option', 'Middlemarch');
    await page.click('#propose-form button[type="submit"]');
    await page.waitForSelector('#start-form button');
    await page.click('#start-form button');
    await page.waitForFunction(() => document.querySelector('#room-status')?.dataset.status === 'voting');
    await context.close();
  });
});
