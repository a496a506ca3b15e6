/**
 * The room page as a place to take part, driven in Chromium the way two people and an agent would:
 * shared by the SQLite run (one process) and the Redis run (two processes, each person on another).
 * Every request the pages make is recorded with its Referer, with the pages' console, so a test can
 * check that no secret ever leaves in a URL, a header it should not be in, or a log line.
 */
// Functions passed to page.evaluate run in the browser; these files are typed for Node.
declare const document: any;
declare const localStorage: any;
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { watchPage, type PageWatch } from './browser.js';
import { call, NO_RATE_LIMITS } from './service.js';

/** Request lines logged at info (the log is searched for secrets), and no rate limits. */
export const FAST_PAGE_ENV = { LOG_LEVEL: 'info', ...NO_RATE_LIMITS };

export interface Traffic {
  /** Every request URL and Referer header the pages sent, and every console line they printed. */
  lines: string[];
}

export function recordTraffic(page: Page, traffic: Traffic, origin: string): PageWatch {
  page.on('request', (request) => {
    traffic.lines.push(`url ${request.url()}`);
    const referer = request.headers().referer;
    if (referer) traffic.lines.push(`referer ${referer}`);
  });
  page.on('console', (message) => traffic.lines.push(`console ${message.text()}`));
  return watchPage(page, origin);
}

export async function newPerson(browser: Browser, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']).catch(() => undefined);
  const page = await context.newPage();
  page.setDefaultTimeout(8000);
  return { context, page };
}

export async function seatToken(page: Page, slug: string): Promise<string> {
  const raw = await page.evaluate((key) => localStorage.getItem(key), `conclave.seat.${slug}`);
  return JSON.parse(raw ?? '{}').token as string;
}

/** The tallies the page shows for decided decision `seq`, as option → count. */
export async function shownTallies(page: Page, seq: number): Promise<Record<string, number>> {
  return page.$$eval(`#section-decided li.decided:nth-child(${seq}) > ol.bars li`, (items) =>
    Object.fromEntries(
      items.map((li) => [li.getAttribute('data-option') ?? '', Number(li.getAttribute('data-count'))]),
    ),
  );
}

export async function waitVerified(page: Page, count: number, timeout = 5000): Promise<void> {
  await page.waitForFunction((n) => document.querySelectorAll('[data-receipt-verified="true"]').length >= n, count, {
    timeout,
  });
}

/** Secrets must appear in none of the lines. */
export function expectNoSecrets(lines: readonly string[], secrets: readonly string[], where: string): void {
  for (const secret of secrets) {
    expect(secret.length, `a secret to look for (${where})`).toBeGreaterThan(8);
    const leaks = lines.filter((line) => line.includes(secret));
    expect(leaks, `${where} leaks a secret`).toEqual([]);
  }
}

export async function restChoose(base: string, slug: string, token: string, choice: unknown): Promise<void> {
  const chosen = await call(base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice } });
  expect(chosen.status, chosen.text).toBe(200);
}

/** Opens the room as the browser that created it would: the creator's seat in localStorage. */
export async function openAsHost(page: Page, base: string, created: any, name = 'host'): Promise<void> {
  await page.goto(`${base}/r/${created.slug}`);
  await page.evaluate(
    ([key, seat]) => localStorage.setItem(key, seat),
    [
      `conclave.seat.${created.slug}`,
      JSON.stringify({ token: created.creator_token, participantId: created.participant_id, name, host: true }),
    ],
  );
  await page.reload();
  await page.waitForSelector('#host-controls');
}
