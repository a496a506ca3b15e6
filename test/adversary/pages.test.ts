/**
 * Pages (docs/architecture.md, Pages): a hostile site frames the visualizer or the device approval
 * page (both take a token or a password in a form) and overlays them, or a room text slips a script
 * or a style into a page. Every HTML response carries a strict Content-Security-Policy (no inline
 * script or style, only this host's assets, no framing), X-Frame-Options DENY, nosniff and
 * Referrer-Policy no-referrer; JSON answers are nosniff and no-referrer too. In Chromium, under
 * that policy, the room page, the visualizer and the device page still work and report no violation.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, launchChromium, watchPage } from '../support/browser.js';
import { call, type RunningService, startService } from '../support/service.js';

const ADMIN = 'pages-admin-token-0123456789abcdef0123456789';

function expectPageHeaders(headers: Headers, what: string) {
  const csp = headers.get('content-security-policy') ?? '';
  const directives = new Map(
    csp.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name, values.join(' ')] as const;
    }),
  );
  expect(directives.get('default-src'), `${what}: ${csp}`).toBe("'none'");
  expect(directives.get('script-src'), what).toBe("'self'");
  expect(directives.get('style-src'), what).toBe("'self'");
  expect(directives.get('frame-ancestors'), what).toBe("'none'");
  expect(directives.get('base-uri'), what).toBe("'none'");
  expect(directives.get('form-action'), what).toBe("'self'");
  expect(csp, what).not.toMatch(/unsafe-inline|unsafe-eval|nonce-|\*/);
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
}

/** What the policy would block, as the markup holds it: inline scripts, styles and handlers. */
function expectNoInlineCode(html: string, what: string) {
  const scripts = [...html.matchAll(/<script\b([^>]*)>/gi)].map((m) => m[1]!);
  for (const attributes of scripts) {
    expect(
      /\bsrc=/.test(attributes) || /type="application\/svc\+json"/.test(attributes),
      `${what}: inline script <script${attributes}>`,
    ).toBe(true);
  }
  expect(html, what).not.toMatch(/<style\b/i);
  expect(html, what).not.toMatch(/\sstyle=/i);
  expect(html, what).not.toMatch(/\son[a-z]+=/i);
  expect(html, what).not.toMatch(/javascript:/i);
}

describe('every page carries the page headers', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let disabled: RunningService;
  let publicSlug: string;
  let unlistedSlug: string;
  let userCode: string;
  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN } });
    disabled = await startService({ clock });
    const pub = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Public <style>?', options: ['a', 'b'], config: { visibility: 'public' } },
    });
    publicSlug = pub.body.slug;
    const unlisted = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Unlisted?', options: ['a', 'b'] },
    });
    unlistedSlug = unlisted.body.slug;
    const started = await call(svc.base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
    userCode = started.body.user_code;
  });
  afterAll(async () => {
    await svc?.stop();
    await disabled?.stop();
  });

  it('sends a strict CSP, X-Frame-Options, nosniff and no-referrer on every HTML route', async () => {
    const pages: [RunningService, string][] = [
      [svc, `/r/${publicSlug}`],
      [svc, `/r/${unlistedSlug}`],
      [svc, '/visualizer'],
      [svc, `/visualizer?room=${publicSlug}`],
      [svc, '/oauth/device'],
      [svc, `/oauth/device?user_code=${userCode}`],
      [svc, '/oauth/device?user_code=ZZZZ-ZZZZ'],
      [disabled, '/oauth/device'],
    ];
    pages.push([svc, '/'], [svc, '/docs'], [svc, '/guide']);
    for (const [service, url] of pages) {
      const res = await call(service.base, 'GET', url, { headers: { accept: 'text/html' } });
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type'), url).toMatch(/^text\/html/);
      expectPageHeaders(res.headers, url);
      expectNoInlineCode(res.text, url);
    }
  });

  it('sends the page headers on the HTML error pages a browser gets', async () => {
    for (const url of ['/r/nosuchroom0', '/no/such/page', '/assets/nosuch.js']) {
      const res = await call(svc.base, 'GET', url, { headers: { accept: 'text/html,*/*;q=0.8' } });
      expect(res.status, url).toBe(404);
      expect(res.headers.get('content-type'), url).toMatch(/^text\/html/);
      expectPageHeaders(res.headers, url);
      expectNoInlineCode(res.text, url);
    }
  });

  it('sends nosniff and no-referrer on JSON, assets and errors too', async () => {
    for (const url of [
      '/healthz',
      `/api/rooms/${publicSlug}`,
      '/r/nosuchroom0',
      '/assets/room.js',
      '/assets/page.css',
      '/no/such/route',
    ]) {
      const res = await call(svc.base, 'GET', url);
      expect(res.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), url).toBe('no-referrer');
    }
    const css = await call(svc.base, 'GET', '/assets/page.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('.chart .state rect');
  });
});

/** Records every CSP violation the page reports, from before its first script runs. */
async function watchPolicy(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as any).__cspViolations = seen;
    (globalThis as any).document.addEventListener('securitypolicyviolation', (event: any) => {
      seen.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  return () => page.evaluate(() => [...((globalThis as any).__cspViolations ?? [])] as string[]);
}

describe.skipIf(!hasChromium)('the pages work under their policy in Chromium', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let browser: Browser;
  let slug: string;
  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN } });
    browser = await launchChromium();
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: {
        question: 'Ship <style>body{display:none}</style>?',
        options: ['yes', 'no <img src=x onerror=alert(1)>'],
        config: { visibility: 'public', early_close: true, settle_window: 0, voting_window: 600 },
      },
    });
    slug = created.body.slug;
    const token = created.body.creator_token;
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'yes' } });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('the room page renders, styles itself, verifies its receipt and reports no violation', async () => {
    const page = await browser.newPage();
    const violations = await watchPolicy(page);
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/r/${slug}`);
    await page.waitForSelector('[data-receipt-verified="true"]');
    // The stylesheet applied (body margin 0 comes from /assets/page.css only).
    expect(
      await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).margin),
    ).toBe('0px');
    expect(await page.$$('main img, main style')).toHaveLength(0);
    expect(await violations()).toEqual([]);
    expect(watch.problems).toEqual([]);
    await page.close();
  });

  it('the visualizer draws, styles the charts, follows a room and reports no violation', async () => {
    const page = await browser.newPage();
    const violations = await watchPolicy(page);
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/visualizer?room=${slug}`);
    await page.waitForSelector('#room-chart [data-current="true"]');
    await page.waitForSelector('[data-timeline-entry]');
    // The chart's standalone look comes from the page stylesheet: no <style> inside the SVG.
    const fill = await page.$eval(
      '#room-chart .state:not([data-current]) rect',
      (rect) => (globalThis as any).getComputedStyle(rect).fill,
    );
    expect(fill).toBe('rgb(244, 246, 251)');
    expect(await violations()).toEqual([]);
    expect(watch.problems).toEqual([]);
    await page.close();
  });

  it('the device page approves a request from its served script and reports no violation', async () => {
    const started = await call(svc.base, 'POST', '/oauth/device_authorization', { body: { client_id: 'agent-cli' } });
    const page = await browser.newPage();
    const violations = await watchPolicy(page);
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/oauth/device?user_code=${started.body.user_code}`);
    await page.fill('#admin-token', ADMIN);
    await page.click('#approve');
    await page.waitForFunction(() => (globalThis as any).document.getElementById('result')?.textContent !== '');
    expect(await page.textContent('#result')).toBe('Request approved.');
    expect(await violations()).toEqual([]);
    expect(watch.problems).toEqual([]);
    await page.close();
  });

  it('the home page and the API reference run under the policy with no violation', async () => {
    for (const [url, ready] of [
      ['/', '#create-room'],
      ['/docs', '#swagger-ui .opblock'],
    ] as const) {
      const page = await browser.newPage();
      const violations = await watchPolicy(page);
      const watch = watchPage(page, svc.base);
      await page.goto(`${svc.base}${url}`);
      await page.waitForSelector(ready);
      expect(await violations(), url).toEqual([]);
      expect(watch.problems, url).toEqual([]);
      expect(watch.foreign, url).toEqual([]);
      await page.close();
    }
  });

  it('cannot be framed by another page', async () => {
    const page = await browser.newPage();
    const frames: string[] = [];
    page.on('console', (message) => frames.push(message.text()));
    await page.setContent(`<iframe src="${svc.base}/visualizer"></iframe>`);
    const framed = page.frames().find((frame) => frame.url().startsWith(`${svc.base}/visualizer`));
    const loaded = framed ? await framed.$('#room-picker').catch(() => null) : null;
    expect(loaded).toBeNull();
    await page.close();
  });
});
