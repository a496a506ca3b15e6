/**
 * The front door for people, in Debian's Chromium: the home page (and its JSON index for programs),
 * /favicon.ico and /robots.txt, the API reference drawn from the live OpenAPI document with no
 * request off the host, and refusals a browser reads as a page while API clients keep the envelope.
 * axe-core finds no serious or critical violation on the pages.
 */
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations/table.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { seriousViolations } from '../support/axe.js';
import { hasChromium, screenshot, serviceAndBrowser, watchPage } from '../support/browser.js';
import type { RunningService } from '../support/service.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe.skipIf(!hasChromium)('the front door', () => {
  const suite = serviceAndBrowser(new ManualClock());
  let svc: RunningService;
  let browser: Browser;
  beforeAll(() => {
    ({ svc, browser } = suite);
  });

  it('answers / as JSON links for programs, and serves the favicon and robots.txt', async () => {
    const json = await fetch(`${svc.base}/`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    const index = (await json.json()) as Record<string, any>;
    expect(index.links).toMatchObject({
      api_reference: `${svc.base}/docs`,
      discovery: `${svc.base}/.well-known/svc.json`,
      visualizer: `${svc.base}/visualizer`,
      guide: `${svc.base}/guide`,
    });
    expect(index.operator.name).toBeTypeOf('string');
    // No Accept header at all is a program too.
    expect((await fetch(`${svc.base}/`, { headers: { accept: '*/*' } })).headers.get('content-type')).toMatch(/json/);
    const favicon = await fetch(`${svc.base}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toBe('image/svg+xml');
    const robots = await fetch(`${svc.base}/robots.txt`);
    expect(await robots.text()).toContain('Disallow: /r/');
  });

  it('serves the guide from the docs/ folder that ships, and nothing outside it', async () => {
    const list = await (await fetch(`${svc.base}/guide`)).text();
    expect(list).toContain('href="/guide/architecture.md"');
    const doc = await fetch(`${svc.base}/guide/architecture.md`);
    expect(doc.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await doc.text()).toContain('## Pages');
    for (const path of ['/guide/..%2Fpackage.json', '/guide/%2e%2e%2fREADME.md', '/guide/README.md']) {
      const refused = await fetch(`${svc.base}${path}`, { headers: { accept: 'application/json' } });
      expect(refused.status, path).toBe(404);
      expect(((await refused.json()) as any).error.code, path).toBe('vendor:conclave:not_found');
    }
  });

  it('shows the home page with the operator, the creation form and the links', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/`);
    const discovery = (await (await fetch(`${svc.base}/.well-known/svc.json`)).json()) as Record<string, any>;
    const text = (await page.textContent('body')) ?? '';
    expect(text).toContain(discovery.operator.name);
    expect(text).toContain(String(discovery.operator.contact).replace(/^mailto:/, ''));
    for (const href of ['/docs', '/guide', '/.well-known/svc.json', '/visualizer']) {
      expect(await page.$$(`main a[href="${href}"]`)).not.toHaveLength(0);
    }
    expect(await page.$$eval('#mechanism option', (o) => o.length)).toBe(discovery.mechanisms_supported.length);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'home-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'home-390');
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('lists every operation of the live OpenAPI document at /docs, served from this host', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/docs`);
    const openapi = (await (await fetch(`${svc.base}/v1/openapi.json`)).json()) as Record<string, any>;
    const operations = Object.values(openapi.paths as Record<string, Record<string, unknown>>).flatMap((item) =>
      Object.keys(item).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)),
    ).length;
    expect(operations).toBeGreaterThanOrEqual(OPERATIONS.filter((op) => !op.mcpOnly).length);
    await page.waitForFunction(
      (n) => (globalThis as any).document.querySelectorAll('#swagger-ui .opblock').length === n,
      operations,
      {
        timeout: 15_000,
      },
    );
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'docs-1280');
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('shows a browser an HTML page for an unknown room or page, with the envelope wording; API clients keep JSON', async () => {
    for (const path of ['/r/nosuchroom', '/no/such/page']) {
      const api = await fetch(`${svc.base}${path}`, { headers: { accept: 'application/json' } });
      const envelope = (await api.json()) as Record<string, any>;
      expect(api.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(envelope.error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
      const plain = await fetch(`${svc.base}${path}`);
      expect(plain.headers.get('content-type')).toMatch(/^application\/json/);

      const html = await fetch(`${svc.base}${path}`, { headers: { accept: BROWSER_ACCEPT } });
      expect(html.status).toBe(api.status);
      expect(html.headers.get('content-type')).toMatch(/^text\/html/);
      expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");

      const page = await browser.newPage();
      const watch = watchPage(page, svc.base);
      const response = await page.goto(`${svc.base}${path}`);
      expect(response?.status()).toBe(404);
      expect(await page.textContent('#error-message')).toBe(envelope.error.message);
      expect(await page.$$('main a[href="/"]')).not.toHaveLength(0);
      expect(await seriousViolations(page)).toEqual([]);
      if (path.startsWith('/r/')) await screenshot(page, 'error-room-not-found');
      // The 404 of the page itself is expected; nothing else may fail.
      expect(watch.problems.filter((p) => !p.includes('404'))).toEqual([]);
      await page.close();
    }
    // API paths stay JSON even for a browser.
    const apiPath = await fetch(`${svc.base}/api/rooms/nosuchroom`, { headers: { accept: BROWSER_ACCEPT } });
    expect(apiPath.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
