/**
 * The room page in Debian's Chromium: a public room read as a person would — question, options,
 * discussion, decided list with winners and signed tallies — each receipt verified in the browser
 * (✓ signature, hash, link), a tampered receipt caught with its reason, the page following the room
 * live; a private room shows only the join sliver. No console error, no request off the host.
 */
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, serviceAndBrowser, screenshot, watchPage } from '../support/browser.js';
import { type SeatedRoom, seatedRoom } from '../support/engagement.js';
import { call, type RunningService } from '../support/service.js';

describe.skipIf(!hasChromium)('the room page in a browser', () => {
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
        question: 'Ship <script>alert(1)</script>?',
        options: ['yes', 'no <i>way</i>'],
        config: { visibility: 'public', early_close: true, settle_window: 0, voting_window: 600 },
      },
      2,
    );
    const say = (token: string, body: string) =>
      call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token, body: { body } });
    await say(room.tokens[0]!, 'We are ready </script><b>really</b>.');
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
    }
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: room.tokens[0],
      body: { question: 'And when?', options: ['today', 'tomorrow'] },
    });
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'today' } });
    }
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: room.tokens[0],
      body: { question: 'Who writes the notes?', options: ['creator', 'member-1'] },
    });
  });

  it('shows the room and verifies every receipt in the browser', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/r/${room.slug}`);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-receipt-verified="pending"]').length === 0,
    );
    const verdicts = await page.$$eval('[data-receipt-verified]', (nodes) =>
      nodes.map((n) => [n.getAttribute('data-receipt-verified'), n.textContent]),
    );
    expect(verdicts).toEqual([
      ['true', '✓ signature ✓ hash ✓ link ✓ replay'],
      ['true', '✓ signature ✓ hash ✓ link ✓ replay'],
    ]);
    // Beside the marks, the room and values each receipt signs, read from the receipt itself.
    const signed = await page.$$eval('[data-receipt-signed]', (nodes) =>
      nodes.map((n) => [n.getAttribute('data-fields-match'), n.textContent]),
    );
    expect(signed).toEqual([
      ['true', '✓ room ✓ fields — signed: winner “yes” (completed), no <i>way</i> 0, yes 2'],
      ['true', '✓ room ✓ fields — signed: winner “today” (completed), today 2, tomorrow 0'],
    ]);
    const text = await page.textContent('main');
    expect(text).toContain('Who writes the notes?');
    expect(text).toContain('We are ready </script><b>really</b>.');
    expect(text).toContain('Ship <script>alert(1)</script>?');
    expect(text).toMatch(/Winner: yes/);
    expect(await page.$$eval('#section-decided ol.bars', (lists) => lists.length)).toBe(2);
    // Room text never becomes markup, and the page keeps exactly one machine-readable script.
    expect(await page.$$('main b, main i, main script')).toHaveLength(0);
    expect(await page.$$('script[type="application/svc+json"]')).toHaveLength(1);
    await screenshot(page, 'room-page-phone');

    // The page follows the room: a new message and a decision resolving appear without a reload.
    const started = Date.now();
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: room.tokens[1],
      body: { body: 'I will write them.' },
    });
    await page.waitForFunction(() =>
      (globalThis as any).document.getElementById('section-discussion')?.textContent?.includes('I will write them.'),
    );
    const discussionShownAfter = Date.now() - started;
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'member-1' } });
    }
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-receipt-verified="true"]').length === 3,
    );
    console.log(`room page: a message showed ${discussionShownAfter} ms after its write; third receipt verified live`);
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('marks a tampered receipt ✗ with the reason', async () => {
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.route(`**/api/rooms/${room.slug}/outcome`, async (route) => {
      const response = await route.fetch();
      const outcome = await response.json();
      const jws: string = outcome.decisions[0].receipt_jws;
      // Flip one character of the first receipt's signature.
      const last = jws.at(-2) === 'A' ? 'B' : 'A';
      outcome.decisions[0].receipt_jws = `${jws.slice(0, -2)}${last}${jws.at(-1)}`;
      await route.fulfill({ response, json: outcome });
    });
    await page.goto(`${svc.base}/r/${room.slug}`);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-receipt-verified="pending"]').length === 0,
    );
    const verdicts = await page.$$eval('[data-receipt-verified]', (nodes) =>
      nodes.map((n) => [n.getAttribute('data-receipt-verified'), n.textContent ?? '']),
    );
    expect(verdicts[0]![0]).toBe('false');
    expect(verdicts[0]![1]).toMatch(/✗ signature/);
    expect(verdicts[0]![1]).toMatch(/✗ hash/);
    expect(verdicts[0]![1]).toMatch(/signature: /);
    // The next receipt still links to the genuine hash the tampered one claims.
    expect(verdicts.slice(1).every(([verified]) => verified === 'true')).toBe(true);
    await screenshot(page, 'room-page-tampered');
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('says so when a field the page shows disagrees with its receipt, showing the signed value', async () => {
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.route(`**/api/rooms/${room.slug}/outcome`, async (route) => {
      const response = await route.fetch();
      const outcome = await response.json();
      // Every signature stays genuine; only the unsigned winner beside the first receipt is edited.
      outcome.decisions[0].resolved_winner = 'no <i>way</i>';
      await route.fulfill({ response, json: outcome });
    });
    await page.goto(`${svc.base}/r/${room.slug}`);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-receipt-verified="pending"]').length === 0,
    );
    const slot = await page.$eval('[data-receipt-verified]', (n) => [
      n.getAttribute('data-receipt-verified'),
      n.textContent,
    ]);
    expect(slot[0]).toBe('false');
    expect(slot[1]).toContain('resolved_winner "no <i>way</i>" differs from the signed winner "yes"');
    const signed = await page.$eval('[data-receipt-signed]', (n) => [
      n.getAttribute('data-fields-match'),
      n.textContent,
    ]);
    expect(signed).toEqual([
      'false',
      '✓ room ✗ fields: what this page shows above differs from what the receipt signs — signed: winner “yes” (completed), no <i>way</i> 0, yes 2',
    ]);
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('shows a private room only as the join sliver', async () => {
    const hidden = await seatedRoom(
      svc.base,
      { question: 'Secret plans?', options: ['a', 'b'], config: { visibility: 'private' } },
      1,
    );
    await call(svc.base, 'POST', `/api/rooms/${hidden.slug}/discuss`, {
      token: hidden.tokens[0],
      body: { body: 'the hidden words' },
    });
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/r/${hidden.slug}`);
    const html = await page.content();
    expect(html).not.toContain('Secret plans');
    expect(html).not.toContain('the hidden words');
    expect(await page.textContent('main')).toContain('This room is private. Join it to read it');
    expect(await page.$$('[data-receipt-verified]')).toHaveLength(0);
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });
});
