/**
 * The room page's script (bundled for the browser): verifies every receipt of the room in the
 * reader's own browser — signature against the service's JWKS, hash, link to the receipt before —
 * with the client library, and keeps the page current by re-reading the room on each event (SSE).
 * It renders with the same functions the server used for the first paint.
 */
import { ConclaveClient, type Jwks, verifyRoomReceiptChain } from '../client/index.js';
import { coalesce } from './coalesce.js';
import { roomSections } from './room-render.js';

const embedded = JSON.parse(document.getElementById('room-state')?.textContent ?? '{}') as {
  slug?: string;
  visibility?: string;
};
const client = new ConclaveClient({ baseUrl: location.origin });

async function verifyReceipts(outcome: unknown, jwks: Jwks): Promise<void> {
  const report = await verifyRoomReceiptChain(outcome, { jwks });
  for (const receipt of report.receipts) {
    if (!receipt.receipt_hash) continue;
    const slot = document.querySelector<HTMLElement>(`[data-receipt-hash="${CSS.escape(receipt.receipt_hash)}"]`);
    if (!slot) continue;
    const mark = (ok: boolean | null, what: string) => (ok === null ? '' : `${ok ? '✓' : '✗'} ${what}`);
    const checks = [
      mark(receipt.signature, 'signature'),
      mark(receipt.hash, 'hash'),
      mark(receipt.link, 'link'),
      mark(receipt.replay, 'replay'),
    ].filter(Boolean);
    slot.dataset.receiptVerified = String(receipt.ok);
    slot.textContent = receipt.ok ? checks.join(' ') : `${checks.join(' ')} — ${receipt.errors.join('; ')}`;
  }
  // A receipt the walk could not reach (a body without decisions) stays unverified, and says so.
  for (const slot of document.querySelectorAll<HTMLElement>('[data-receipt-verified="pending"]')) {
    slot.dataset.receiptVerified = 'false';
    slot.textContent = `✗ not verified: ${report.errors[0] ?? 'the receipt is missing from the outcome'}`;
  }
}

/** Re-renders every section from a fresh read; answers the event seq it reflects. */
async function update(slug: string, jwks: Jwks): Promise<number> {
  const [view, outcome] = await Promise.all([client.getRoom({ slug }), client.outcome({ slug })]);
  const sections = roomSections(view, outcome);
  for (const [name, html] of Object.entries(sections)) {
    const element = document.getElementById(`section-${name}`);
    if (element) element.innerHTML = html;
  }
  await verifyReceipts(outcome, jwks);
  return Number(view.current_through ?? 0);
}

async function main(): Promise<void> {
  const slug = embedded.slug;
  if (!slug || embedded.visibility !== 'public') return;
  const jwks = (await client.jwks()) as Jwks;
  const through = await update(slug, jwks);
  const refresh = coalesce(async () => {
    await update(slug, jwks);
  });
  for await (const _event of client.streamEvents({ slug, since_seq: through })) refresh();
}

main().catch((error: unknown) => {
  const status = document.getElementById('live-status');
  if (status) status.textContent = `Live updates stopped: ${(error as Error).message}`;
});
