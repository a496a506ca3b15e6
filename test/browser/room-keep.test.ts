/**
 * Running a real decision from the room page, in Chromium, several people in separate browser
 * contexts: the host keeps the room through a recovery link, sees every seat and takes a duplicate
 * out of the electorate, ends voting when everyone has chosen, ends a decision opened by mistake so
 * the room can close, and reads the sealed result with its reasons.
 */
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, serviceAndBrowser, watchPage } from '../support/browser.js';
import { call, type RunningService } from '../support/service.js';
import { newPerson, openAsHost } from '../support/take-part.js';

// Functions passed to page.evaluate run in the browser; this file is typed for Node.
declare const document: any;

describe.skipIf(!hasChromium)('the host never loses the room', () => {
  const suite = serviceAndBrowser(new ManualClock());
  let svc: RunningService;
  let browser: Browser;
  beforeAll(() => {
    ({ svc, browser } = suite);
  });

  it('leaves after a confirmation that shows the recovery link, restores the seat elsewhere and closes the room', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Team offsite' } });
    const slug = created.body.slug as string;
    const first = await newPerson(browser, 360);
    const watch = watchPage(first.page, svc.base);
    await openAsHost(first.page, svc.base, created.body, 'Ada');

    // Leaving asks first, and offers the recovery link again, with its warning.
    await first.page.click('#leave-device');
    await first.page.waitForSelector('#leave-dialog[open]');
    expect(await first.page.textContent('#leave-dialog')).toContain('Anyone who has it can act as you');
    const link = await first.page.inputValue('#leave-recovery-link');
    expect(new URL(link).pathname).toBe(`/r/${slug}`);
    expect(new URL(link).search).toBe('');
    expect(new URL(link).hash).toContain(encodeURIComponent(created.body.creator_token).slice(0, 10));
    await first.page.click('#leave-cancel');
    expect(await first.page.isVisible('#host-controls')).toBe(true);
    await first.page.click('#leave-device');
    await first.page.click('#leave-confirm');
    await first.page.waitForSelector('#join-form');
    expect(await first.page.$('#host-controls h2')).toBeNull();
    expect(watch.problems).toEqual([]);
    await first.context.close();

    // Another device opens the link: the seat and the host controls come back; the link leaves the address bar.
    const second = await newPerson(browser, 1280);
    const requests: string[] = [];
    second.page.on('request', (request) => requests.push(`${request.url()} ${request.headers().referer ?? ''}`));
    await second.page.goto(link);
    await second.page.waitForSelector('#host-controls');
    expect(await second.page.textContent('#seat-name')).toBe('Ada');
    expect(new URL(second.page.url()).hash).toBe('');
    expect(requests.filter((line) => line.includes(created.body.creator_token))).toEqual([]);
    await second.page.fill('#close-statement', 'Done from the laptop.');
    await second.page.click('#close-form button[type="submit"]');
    await second.page.waitForFunction(() => document.getElementById('room-status')?.dataset.status === 'concluded');
    await second.context.close();
  });

  it('says so when a recovery link no longer holds a seat', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Gone soon' } });
    const { context, page } = await newPerson(browser);
    await page.goto(`${svc.base}/r/${created.body.slug}#seat=t_not_a_token&id=p_x&name=Ada&host=1`);
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.includes('no longer holds'));
    expect(await page.isVisible('#join-panel')).toBe(true);
    await context.close();
  });
});
