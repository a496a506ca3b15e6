/**
 * The creator's controls and the rest of taking part, in Chromium: proposals collected on a slate,
 * "start choosing", an abstention with its reason, an agreement decision that says it needs everyone,
 * and a settling countdown that ticks.
 */
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, screenshot, serviceAndBrowser, watchPage } from '../support/browser.js';
import { call, type RunningService } from '../support/service.js';
import { newPerson, openAsHost, restChoose, waitVerified } from '../support/take-part.js';

// Functions passed to page.evaluate run in the browser; this file is typed for Node.
declare const document: any;

describe.skipIf(!hasChromium)('host controls, proposals, abstention, agreement and settling', () => {
  const suite = serviceAndBrowser(new ManualClock());
  let svc: RunningService;
  let browser: Browser;
  beforeAll(() => {
    ({ svc, browser } = suite);
  });

  it('collects a slate, starts choosing, abstains with a reason, and opens an agreement', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Weekend projects', config: { early_close: true, settle_window: 0 } },
    });
    const member = await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/join`, {
      body: { display_name: 'Moe' },
    });
    const { context, page } = await newPerson(browser, 390);
    const watch = watchPage(page, svc.base);
    await openAsHost(page, svc.base, created.body);
    await page.fill('#ask-question', 'What do we build?');
    await page.click('#ask-form button[type="submit"]');
    await page.waitForSelector('#propose-form');
    expect(await page.textContent('[data-decision-status]')).toBe('proposing');
    for (const option of ['a shed', 'a boat']) {
      await page.fill('#propose-option', option);
      await page.click('#propose-form button[type="submit"]');
      await page.waitForFunction(
        (o) => document.querySelector('#section-now ol.options')?.textContent?.includes(o),
        option,
      );
    }
    await page.click('#start-form button[type="submit"]');
    await page.waitForSelector('#abstain-form');
    await page.fill('#abstain-reason', 'I proposed both');
    await page.click('#abstain-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('section-now')?.textContent?.includes('I proposed both'));
    await restChoose(svc.base, created.body.slug, member.body.participant_token, 'a boat');
    await waitVerified(page, 1);
    expect(await page.textContent('#section-decided')).toContain('1 abstained');

    await page.fill('#ask-question', 'Do we all agree on blue?');
    await page.fill('#ask-options', 'blue');
    await page.check('#ask-agreement');
    await page.click('#ask-form button[type="submit"]');
    await page.waitForSelector('#choose-form');
    expect(await page.textContent('#choose-form')).toContain('passes only if everyone eligible accepts');
    expect(await page.$$('#abstain-form')).toHaveLength(0);
    await screenshot(page, 'host-agreement-390');
    expect(watch.problems).toEqual([]);
    await context.close();
  });

  it('shows a settling countdown that ticks', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: {
        question: 'Settle?',
        options: ['yes', 'no'],
        config: { visibility: 'public', early_close: true, settle_window: 600 },
      },
    });
    const member = await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/join`, {
      body: { display_name: 'Moe' },
    });
    for (const token of [created.body.creator_token, member.body.participant_token]) {
      await restChoose(svc.base, created.body.slug, token, 'yes');
    }
    const { context, page } = await newPerson(browser);
    await page.goto(`${svc.base}/r/${created.body.slug}`);
    expect(await page.textContent('#settling')).toContain('600 s');
    await page.waitForFunction(
      () => document.querySelector('#settling .countdown')?.textContent === '599 s',
      undefined,
      {
        timeout: 3000,
      },
    );
    await context.close();
  });
});
