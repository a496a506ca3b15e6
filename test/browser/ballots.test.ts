/**
 * Every ballot kind cast from the room page in Chromium — one option, approval checkboxes, a ranking
 * reordered with the keyboard only, scores 0–5, quadratic credits — each the deciding ballot of a
 * three-seat room; the page's tallies are the receipt's, the receipt replays to them, and the ballot
 * the receipt signs is the one the person entered. A ranked-choice decision shows every round, a
 * pairwise one its matrix. axe-core finds no serious or critical violation on the room page, joined
 * (with each ballot form) and not.
 */
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { replayReceipt, replayTrace } from '../../src/mechanisms/replay.js';
import { decodeCompact } from '../../src/receipts/compact.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { seriousViolations } from '../support/axe.js';
import { hasChromium, screenshot, serviceAndBrowser, watchPage } from '../support/browser.js';
import { seatedRoom } from '../support/engagement.js';
import { call, type RunningService } from '../support/service.js';
import { newPerson, restChoose, shownTallies, waitVerified } from '../support/take-part.js';

// Functions passed to page.evaluate run in the browser; this file is typed for Node.
declare const document: any;

const OPTIONS = ['alpha', 'beta', 'gamma'];

/** Presses Tab until the focused element matches `selector`. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) === true, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

interface Case {
  mechanism: string;
  /** The two REST ballots cast first: they disagree, so the page's ballot decides. */
  others: [unknown, unknown];
  /** Fills the page's ballot form; answers the ballot the receipt must sign (as its JCS text). */
  fill: (page: Page) => Promise<string>;
}

const CASES: Case[] = [
  {
    mechanism: 'simple_majority',
    others: ['alpha', 'beta'],
    fill: async (page) => {
      await page.check('#choose-form input[value="0"]');
      return 'alpha';
    },
  },
  {
    mechanism: 'approval',
    others: [['alpha'], ['beta']],
    fill: async (page) => {
      await page.check('#choose-form input[value="0"]');
      await page.check('#choose-form input[value="2"]');
      return JSON.stringify(['alpha', 'gamma']);
    },
  },
  {
    mechanism: 'ranked_choice',
    others: [
      ['gamma', 'alpha', 'beta'],
      ['beta', 'alpha', 'gamma'],
    ],
    fill: async (page) => {
      // Keyboard only: Tab to gamma's item, move it up one place with the arrow key.
      await page.focus('#choose-form');
      await tabTo(page, '#ranking li[data-index="2"]');
      await page.keyboard.press('ArrowUp');
      return JSON.stringify(['alpha', 'gamma', 'beta']);
    },
  },
  {
    mechanism: 'ranked_pairwise',
    others: [
      ['gamma', 'alpha', 'beta'],
      ['beta', 'alpha', 'gamma'],
    ],
    fill: async (page) => {
      await page.focus('#choose-form');
      await tabTo(page, '#ranking li[data-index="2"]');
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      return JSON.stringify(['gamma', 'alpha', 'beta']);
    },
  },
  {
    mechanism: 'score_vote',
    others: [{ alpha: 5 }, { beta: 5 }],
    fill: async (page) => {
      await page.fill('#ballot-0', '4');
      await page.fill('#ballot-1', '1');
      await page.fill('#ballot-2', '0');
      return JSON.stringify({ alpha: 4, beta: 1, gamma: 0 });
    },
  },
  {
    mechanism: 'quadratic_vote',
    others: [{ alpha: 9 }, { beta: 9 }],
    fill: async (page) => {
      await page.fill('#ballot-0', '4');
      await page.fill('#ballot-2', '5');
      expect(await page.textContent('#credit-cost')).toBe('Credits spent: 9 of 9.');
      return JSON.stringify({ alpha: 4, gamma: 5 });
    },
  },
];

describe.skipIf(!hasChromium)('every ballot kind from the room page', () => {
  const suite = serviceAndBrowser(new ManualClock());
  let svc: RunningService;
  let browser: Browser;
  beforeAll(() => {
    ({ svc, browser } = suite);
  });

  for (const c of CASES) {
    it(`${c.mechanism}: the page's ballot decides, and the receipt replays to what the page shows`, async () => {
      const room = await seatedRoom(
        svc.base,
        {
          question: `Which one (${c.mechanism})?`,
          options: OPTIONS,
          config: { mechanism: c.mechanism, early_close: true, settle_window: 0 },
        },
        2,
      );
      const { context, page } = await newPerson(browser, c.mechanism.startsWith('ranked') ? 390 : 1280);
      const watch = watchPage(page, svc.base);
      await page.goto(`${svc.base}/r/${room.slug}`);
      await page.waitForSelector('#join-form');
      if (c.mechanism === 'simple_majority') expect(await seriousViolations(page)).toEqual([]);
      await page.fill('#join-name', 'Pat');
      await page.click('#join-button');
      await page.waitForSelector('#choose-form');
      const person = JSON.parse(
        (await page.evaluate((key) => (globalThis as any).localStorage.getItem(key), `conclave.seat.${room.slug}`)) ??
          '{}',
      );
      for (const [i, ballot] of c.others.entries()) await restChoose(svc.base, room.slug, room.tokens[i]!, ballot);
      await page.waitForFunction(() => document.getElementById('chosen-count')?.textContent?.startsWith('2 of 3'));
      const expected = await c.fill(page);
      expect(await seriousViolations(page)).toEqual([]);
      if (c.mechanism.startsWith('ranked') || c.mechanism === 'quadratic_vote') {
        await screenshot(page, `ballot-${c.mechanism}-${c.mechanism.startsWith('ranked') ? 390 : 1280}`);
      }
      if (c.mechanism.startsWith('ranked')) {
        await tabTo(page, '#choose-form button[type="submit"]');
        await page.keyboard.press('Enter');
      } else {
        await page.click('#choose-form button[type="submit"]');
      }
      await waitVerified(page, 1);
      expect(await page.textContent('[data-receipt-verified="true"]')).toBe('✓ signature ✓ hash ✓ link ✓ replay');

      const outcome = await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] });
      const payload = decodeCompact(outcome.body.decisions[0].receipt_jws).payload as any;
      const mine = payload.svc.votes.find((v: any) => v.agent_id === `participant:${person.participantId}`);
      expect(mine.choice).toBe(expected);
      const replay = replayReceipt(payload);
      expect(replay.result).toBe('match');
      expect(await shownTallies(page, 1)).toEqual(replay.expected?.tallies);
      expect(await page.textContent('#section-decided li.decided')).toContain(
        `Winner: ${outcome.body.decisions[0].resolved_winner ?? 'none'}`,
      );
      if (c.mechanism === 'ranked_choice') {
        const rounds = ((replayTrace(payload)?.rounds ?? []) as unknown[]).length;
        expect(rounds).toBeGreaterThan(1);
        expect(await page.$$('#section-decided ol.rounds > li.round')).toHaveLength(rounds);
        expect(await page.textContent('#section-decided ol.rounds')).toContain('Eliminated:');
      }
      if (c.mechanism === 'ranked_pairwise') {
        const d = replayTrace(payload)?.pairwise_preferences as Record<string, Record<string, number>>;
        const cells = await page.$$eval('#section-decided table.matrix tbody tr', (rows) =>
          rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)),
        );
        expect(cells).toEqual(OPTIONS.map((a) => OPTIONS.map((b) => (a === b ? '—' : String(d[a]?.[b] ?? 0)))));
      }
      if (c.mechanism.startsWith('ranked')) await screenshot(page, `resolved-${c.mechanism}-390`);
      expect(await seriousViolations(page)).toEqual([]);
      expect(watch.problems).toEqual([]);
      expect(watch.foreign).toEqual([]);
      await context.close();
    });
  }
});
