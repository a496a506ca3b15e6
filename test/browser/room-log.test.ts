/**
 * The room page's transparency-log check in Debian's Chromium (docs/transparency-log.md,
 * Verifying): beside each receipt's signature check the page shows "included in the log at index N
 * of tree size M", verified in the browser (the leaf's position label against discovery's position
 * keys, the checkpoint's note signature against discovery's `audit_log.verifier_key`, then the
 * inclusion proof of the commitment leaf rebuilt from the receipt); a receipt the integrator has not sequenced
 * yet says so, and the page shows its inclusion once it is (proving the new checkpoint consistent
 * with the one it verified before); a tampered proof or checkpoint is marked ✗ with its reason, and
 * so is a fork: another tree of the same size, validly signed, shown to a page already open.
 */
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { leafHash } from '../../src/tlog/merkle.js';
import { fromBase64, toBase64 } from '../../src/tlog/note.js';
import { receiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { MerkleTree } from '../../src/tlog/tree.js';
import { hasChromium, screenshot, serviceAndBrowser, watchPage } from '../support/browser.js';
import { type SeatedRoom, seatedRoom } from '../support/engagement.js';
import { call, type RunningService } from '../support/service.js';

type Row = { receipt_hash: string; transparency_log?: { index: number; tree_size: number } };

/** Every log slot once none is still being checked: [data-log-verified, text]. */
async function logVerdicts(page: Page, settled: string[] = ['pending', 'unsequenced']): Promise<string[][]> {
  await page.waitForFunction(
    (waiting) =>
      [...(globalThis as any).document.querySelectorAll('[data-log-verified]')].every(
        (slot: any) => !waiting.includes(slot.getAttribute('data-log-verified')),
      ),
    settled,
  );
  return page.$$eval('[data-log-verified]', (nodes) =>
    nodes.map((n) => [n.getAttribute('data-log-verified') ?? '', n.textContent ?? '']),
  );
}

describe.skipIf(!hasChromium)("the room page's transparency-log check in a browser", () => {
  const clock = new ManualClock();
  const suite = serviceAndBrowser(clock);
  let svc: RunningService;
  let browser: Browser;
  let room: SeatedRoom;

  const decide = async (question: string) => {
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/ask`, {
      token: room.tokens[0],
      body: { question, options: ['yes', 'no'] },
    });
    for (const token of room.tokens) {
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
    }
  };
  const outcomeRows = async (): Promise<Row[]> =>
    (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`)).body.decisions as Row[];

  beforeAll(async () => {
    ({ svc, browser } = suite);
    // Another room's receipts first, so this room's leaves do not start at index 0.
    const other = await seatedRoom(svc.base, {
      question: 'Warm up?',
      options: ['yes', 'no'],
      config: { visibility: 'public', early_close: true, settle_window: 0 },
    });
    await call(svc.base, 'POST', `/api/rooms/${other.slug}/choose`, { token: other.tokens[0], body: { choice: 'no' } });
    await call(svc.base, 'POST', `/api/rooms/${other.slug}/choose`, { token: other.tokens[1], body: { choice: 'no' } });
    room = await seatedRoom(svc.base, {
      about: 'A room of several decisions',
      config: { type: 'persistent', visibility: 'public', early_close: true, settle_window: 0 },
    });
    await decide('First?');
    await decide('Second?');
    await svc.service.integrator.integrateNow();
  });

  it('shows each receipt included in the log at its index, verified in the browser', async () => {
    const rows = await outcomeRows();
    const [first, second] = rows.map((row) => row.transparency_log!.index);
    expect(first).toBeGreaterThan(0);
    expect(second).toBe(first! + 1);
    const size = rows[0]!.transparency_log!.tree_size;
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/r/${room.slug}`);
    expect(await logVerdicts(page)).toEqual([
      ['true', `✓ included in the log at index ${first} of tree size ${size}`],
      ['true', `✓ included in the log at index ${second} of tree size ${size}`],
    ]);
    // Beside each receipt's signature check, in the same line (hash, signature check, log, signed values).
    expect(await page.$$eval('p.receipt', (lines) => lines.map((line) => line.children.length))).toEqual([4, 4]);
    expect(watch.requests.some((url) => url.endsWith('/.well-known/svc.json'))).toBe(true);
    await screenshot(page, 'room-page-log-inclusion');
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('says "not yet sequenced", then shows the inclusion once the integrator sequences it', async () => {
    await svc.service.integrator.stop();
    try {
      await decide('Third?');
      const rows = await outcomeRows();
      expect(rows.at(-1)!.transparency_log).toBeUndefined();
      const earlierSize = rows[0]!.transparency_log!.tree_size;
      const first = rows[0]!.transparency_log!.index;
      const page = await browser.newPage();
      const watch = watchPage(page, svc.base);
      await page.goto(`${svc.base}/r/${room.slug}`);
      const before = await logVerdicts(page, ['pending']);
      expect(before.at(-1)).toEqual(['unsequenced', 'transparency log: not yet sequenced (checking again shortly)']);
      expect(before.slice(0, -1).every(([verified]) => verified === 'true')).toBe(true);
      await screenshot(page, 'room-page-log-unsequenced');

      await svc.service.integrator.integrateNow();
      const after = await logVerdicts(page);
      const size = earlierSize + 1;
      expect(after).toEqual([
        ['true', `✓ included in the log at index ${first} of tree size ${size}`],
        ['true', `✓ included in the log at index ${first + 1} of tree size ${size}`],
        ['true', `✓ included in the log at index ${size - 1} of tree size ${size}`],
      ]);
      // The page proved the larger checkpoint extends the one it had verified.
      expect(
        watch.requests.some((url) => url.includes(`/log/proof/consistency?first=${earlierSize}&second=${size}`)),
      ).toBe(true);
      expect(watch.problems).toEqual([]);
      await page.close();
    } finally {
      svc.service.integrator.start();
    }
  });

  it('marks a tampered inclusion proof or checkpoint ✗ with the reason', async () => {
    await svc.service.integrator.integrateNow();
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.route(`**/api/rooms/${room.slug}/outcome`, async (route) => {
      const response = await route.fetch();
      const outcome = await response.json();
      // First receipt: one bit of one proof hash flipped.
      const proof: string[] = outcome.decisions[0].transparency_log.inclusion_proof;
      proof[0] = `${proof[0]!.startsWith('A') ? 'B' : 'A'}${proof[0]!.slice(1)}`;
      // Second receipt: its checkpoint claims another root under the genuine signature.
      const note: string = outcome.decisions[1].transparency_log.checkpoint;
      const lines = note.split('\n');
      lines[2] = `${lines[2]!.startsWith('A') ? 'B' : 'A'}${lines[2]!.slice(1)}`;
      outcome.decisions[1].transparency_log.checkpoint = lines.join('\n');
      await route.fulfill({ response, json: outcome });
    });
    await page.goto(`${svc.base}/r/${room.slug}`);
    const verdicts = await logVerdicts(page);
    expect(verdicts[0]![0]).toBe('false');
    expect(verdicts[0]![1]).toMatch(
      /^✗ transparency log: inclusion: the receipt's commitment leaf is not leaf \d+ of the checkpoint's tree/,
    );
    expect(verdicts[1]![0]).toBe('false');
    expect(verdicts[1]![1]).toMatch(/^✗ transparency log: checkpoint: no valid signature/);
    expect(verdicts[2]![0]).toBe('true');
    // The receipts' own signatures still verify: only the log evidence was tampered with.
    expect(
      await page.$$eval('[data-receipt-verified]', (nodes) =>
        nodes.map((n) => n.getAttribute('data-receipt-verified')),
      ),
    ).toEqual(['true', 'true', 'true']);
    await screenshot(page, 'room-page-log-tampered');
    expect(watch.problems).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('catches a fork: a validly signed checkpoint that does not extend the one it verified before', async () => {
    const page = await browser.newPage();
    const watch = watchPage(page, svc.base);
    await page.goto(`${svc.base}/r/${room.slug}`);
    const genuine = await logVerdicts(page);
    expect(genuine.every(([verified]) => verified === 'true')).toBe(true);
    const size = Number(/tree size (\d+)/.exec(genuine[0]![1]!)![1]);

    // The operator (holding the key) now shows this reader another tree of the same size, in which
    // each receipt is genuinely included: signature and inclusion verify, only history differs.
    const signer = svc.service.services.tlog!.noteSigner();
    await page.route(`**/api/rooms/${room.slug}/outcome`, async (route) => {
      const response = await route.fetch();
      const outcome = await response.json();
      const leaves = Array.from({ length: size }, (_, i) => leafHash(new TextEncoder().encode(`forged ${i}`)));
      // Each receipt's own commitment leaf, with its genuine (proven) position label.
      for (const row of outcome.decisions) {
        const { key_id, label } = row.transparency_log.position;
        leaves[row.transparency_log.index] = leafHash(receiptLeaf(row.receipt_jws, key_id, fromBase64(label)));
      }
      const forged = new MerkleTree();
      forged.append(leaves);
      const checkpoint = signer.signCheckpoint(size, forged.root());
      for (const row of outcome.decisions) {
        row.transparency_log = {
          index: row.transparency_log.index,
          tree_size: size,
          checkpoint,
          inclusion_proof: forged.inclusion(row.transparency_log.index, size).map(toBase64),
          position: row.transparency_log.position,
        };
      }
      await route.fulfill({ response, json: outcome });
    });
    // A room event makes the page read the outcome again.
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token: room.tokens[1], body: { body: 'hello' } });
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-log-verified="false"]').length === 3,
    );
    const verdicts = await logVerdicts(page);
    for (const [, text] of verdicts) {
      expect(text).toBe(
        `✗ transparency log: consistency: the checkpoint of tree size ${size} and the one of size ${size} this page verified before are not one history`,
      );
    }
    await screenshot(page, 'room-page-log-fork');
    expect(watch.problems).toEqual([]);
    await page.close();
  });
});
