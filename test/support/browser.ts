/**
 * Debian's Chromium driven by playwright-core, for the page tests. Under CI a missing browser is a
 * failure, never a silent skip. watchPage() records what a page must never do: log a console error,
 * throw, fail a request, or ask any host but the service.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Clock } from '../../src/runtime/clock.js';
import { type RunningService, startService } from './service.js';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.CI === 'true') {
  throw new Error(`${CHROMIUM} is missing, and CI requires the browser tests`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/**
 * A service on `clock` and a browser for the suite it is called in (before the suite's own hooks);
 * read `svc` and `browser` from the returned object inside hooks and tests.
 */
export function serviceAndBrowser(clock: Clock): { readonly svc: RunningService; readonly browser: Browser } {
  const suite = {} as { svc: RunningService; browser: Browser };
  beforeAll(async () => {
    suite.svc = await startService({ clock });
    suite.browser = await launchChromium();
  });
  afterAll(async () => {
    await suite.browser?.close();
    await suite.svc?.stop();
  });
  return suite;
}

export interface PageWatch {
  /** Console errors, uncaught exceptions and failed requests, as text. */
  problems: string[];
  /** Every URL the page asked for that is not on the service's origin. */
  foreign: string[];
  requests: string[];
}

export function watchPage(page: Page, origin: string): PageWatch {
  const watch: PageWatch = { problems: [], foreign: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') watch.problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => watch.problems.push(`exception: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A stream the page itself ends (navigation, close) is not a failure of the page.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') {
      watch.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
    }
  });
  page.on('request', (request) => {
    const url = request.url();
    watch.requests.push(url);
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) watch.foreign.push(url);
  });
  return watch;
}

/** Where page tests leave their screenshots (test-artifacts/, or $TEST_ARTIFACTS). */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.TEST_ARTIFACTS ?? path.resolve('test-artifacts');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
