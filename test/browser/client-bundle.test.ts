/**
 * The client library in a browser: bundled by esbuild for the browser platform (a Node built-in
 * anywhere in its imports fails the build), then run in Debian's Chromium, where the verification
 * helpers check a real room's receipts and catch a tampered one.
 */
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { hasChromium, launchChromium } from '../support/browser.js';
import { seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

describe.skipIf(!hasChromium)('conclave/client in a browser', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let browser: Browser;
  let page: Server;
  let pageUrl: string;
  let bundle: string;
  let outcome: any;
  let jwks: unknown;
  let reader: { slug: string; token: string };

  beforeAll(async () => {
    const built = await build({
      entryPoints: [fileURLToPath(new URL('../../src/client/index.ts', import.meta.url))],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    bundle = built.outputFiles[0]!.text;
    expect(
      Object.keys(built.metafile.inputs).filter((input) => input.startsWith('node:') || input.includes('/src/store/')),
    ).toEqual([]);

    svc = await startService({ clock });
    const room = await seatedRoom(
      svc.base,
      { question: 'Browser?', options: ['yes', 'no'], config: { voting_window: 60 } },
      2,
    );
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
    }
    clock.advance(61_000);
    await svc.service.scheduler.runDue();
    outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] })).body;
    reader = { slug: room.slug, token: room.tokens[0]! };
    jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;

    page = createServer((request, response) => {
      if (request.url === '/client.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      } else {
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<!doctype html><title>client</title><script type="module">import * as client from "/client.js"; window.conclave = client;</script>',
          );
      }
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
    await svc?.stop();
  });

  it('bundles without Node built-ins and verifies receipts in Chromium', async () => {
    const tab = await browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    tab.on('request', (request) => requests.push(request.url()));
    tab.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    tab.on('pageerror', (error) => problems.push(error.message));
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (globalThis as any).conclave !== undefined);
    const results = await tab.evaluate(
      async ({ outcome, jwks }) => {
        const client = (globalThis as any).conclave;
        const genuine = await client.verifyRoomReceiptChain(outcome, { jwks, room: 'from-body' });
        const tampered = structuredClone(outcome);
        tampered.decisions[0].receipt_hash = `sha256:${'0'.repeat(64)}`;
        const forged = await client.verifyRoomReceiptChain(tampered, { jwks, room: 'from-body' });
        const jws = outcome.decisions[0].receipt_jws;
        const key = await client.publicKeyFromJwks(jwks, client.receiptKid(jws));
        const single = await client.verifyCompactReceipt(jws, key, outcome.decisions[0].receipt_hash);
        return {
          genuine: {
            ok: genuine.ok,
            receipts: genuine.receipts.map((r: any) => [r.signature, r.hash, r.link, r.replay]),
          },
          forged: { ok: forged.ok, errors: forged.errors },
          typ: single.header.typ,
          hasClient: typeof client.ConclaveClient === 'function',
        };
      },
      { outcome, jwks },
    );
    await tab.close();
    expect(problems).toEqual([]);
    expect(results.genuine).toEqual({ ok: true, receipts: [[true, true, true, true]] });
    expect(results.forged.ok).toBe(false);
    expect(results.forged.errors[0]).toMatch(/^decisions\[0\]: receipt_jws does not hash/);
    expect(results.typ).toBe('svc-receipt+jwt');
    expect(results.hasClient).toBe(true);
    expect(requests.every((url) => url.startsWith(pageUrl))).toBe(true);
  });

  it('pages through the stored events and follows them over SSE in Chromium', async () => {
    const tab = await browser.newPage();
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(error.message));
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (globalThis as any).conclave !== undefined);
    const seen = await tab.evaluate(
      async ({ base, slug, token }) => {
        const client = new (globalThis as any).conclave.ConclaveClient({ baseUrl: base, token });
        const paged: number[] = [];
        for await (const event of client.paginateEvents({ slug, since_seq: 0, limit: 2 })) paged.push(event.seq);
        const streamed: number[] = [];
        const controller = new AbortController();
        for await (const event of client.streamEvents({ slug, since_seq: 0, signal: controller.signal })) {
          streamed.push(event.data.seq);
          if (streamed.length === paged.length) controller.abort();
        }
        return { paged, streamed };
      },
      { base: svc.base, ...reader },
    );
    await tab.close();
    expect(problems).toEqual([]);
    expect(seen.paged.length).toBeGreaterThanOrEqual(4);
    expect(seen.paged).toEqual(Array.from({ length: seen.paged.length }, (_, i) => i + 1));
    expect(seen.streamed).toEqual(seen.paged);
  });
});
