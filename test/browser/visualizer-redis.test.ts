/**
 * The visualizer follows writes made on another process: in Redis mode the page talks to one
 * service process while the choices land on a second, real node process on the same Redis.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, watchPage } from '../support/browser.js';
import { type ChildService, spawnService } from '../support/child-service.js';
import { seatedRoom } from '../support/engagement.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const redis = hasChromium ? await startRedisServer() : null;

describe.skipIf(!hasChromium || redis === null)('the visualizer across two processes on one Redis', () => {
  let a: RunningService;
  let b: ChildService;
  let browser: Browser;
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `visualizer-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
  };

  beforeAll(async () => {
    a = await startService({ env });
    b = await spawnService(env);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it('moves the highlighted states when the other process commits', async () => {
    const room = await seatedRoom(
      a.base,
      {
        question: 'Across processes?',
        options: ['yes', 'no'],
        config: { visibility: 'public', early_close: true, settle_window: 0 },
      },
      2,
    );
    const page = await browser.newPage();
    const watch = watchPage(page, a.base);
    await page.goto(`${a.base}/visualizer?room=${room.slug}`);
    await page.waitForSelector('#decision-charts [data-current="true"]');
    await page.evaluate(() => {
      const seen: string[] = [];
      (globalThis as any).seen = seen;
      const note = () => {
        const state = (globalThis as any).document
          .querySelector('#decision-charts [data-current="true"]:not(.compound)')
          ?.getAttribute('data-state');
        if (state && seen.at(-1) !== state) seen.push(state);
      };
      note();
      new (globalThis as any).MutationObserver(note).observe(
        (globalThis as any).document.getElementById('decision-charts')!,
        {
          attributes: true,
          subtree: true,
        },
      );
    });

    for (const token of room.tokens) {
      await call(b.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
    }
    const acknowledged = Date.now();
    await page.waitForFunction(() => (globalThis as any).seen.includes('decision.resolved'));
    console.log(`visualizer on Redis: resolved shown ${Date.now() - acknowledged} ms after the other process's 2xx`);
    expect(await page.evaluate(() => (globalThis as any).seen)).toEqual([
      'decision.voting.open',
      'decision.sealed',
      'decision.resolved',
    ]);
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });
});
