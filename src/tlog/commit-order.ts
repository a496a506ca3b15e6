/**
 * The order in which receipts stored before the log existed enter it. The stores kept no global
 * commit order then, only each room's chain, so the back-fill orders by signing time (`iat`, the
 * seal instant), never moving a receipt ahead of an earlier one of its own room: each room's chain
 * order is kept exactly, rooms interleave by time, ties by room slug.
 */
import { base64urlDecodeStrict } from '../receipts/base64url.js';

export interface ChainedReceipt {
  slug: string;
  sequence: number;
  jws: string;
}

function issuedAt(jws: string): number {
  try {
    const payload = JSON.parse(new TextDecoder().decode(base64urlDecodeStrict(jws.split('.')[1] ?? ''))) as {
      iat?: unknown;
    };
    return typeof payload.iat === 'number' && Number.isFinite(payload.iat) ? payload.iat : 0;
  } catch {
    return 0;
  }
}

export function backfillOrder<T extends ChainedReceipt>(receipts: readonly T[]): T[] {
  const bySlug = new Map<string, T[]>();
  for (const receipt of receipts) {
    const chain = bySlug.get(receipt.slug) ?? [];
    chain.push(receipt);
    bySlug.set(receipt.slug, chain);
  }
  const keyed: { receipt: T; at: number }[] = [];
  for (const chain of bySlug.values()) {
    chain.sort((a, b) => a.sequence - b.sequence);
    let at = Number.NEGATIVE_INFINITY;
    for (const receipt of chain) {
      // Never earlier than the room's previous receipt: the chain order wins over a clock.
      at = Math.max(at, issuedAt(receipt.jws));
      keyed.push({ receipt, at });
    }
  }
  keyed.sort(
    (a, b) =>
      a.at - b.at ||
      (a.receipt.slug < b.receipt.slug ? -1 : a.receipt.slug > b.receipt.slug ? 1 : 0) ||
      a.receipt.sequence - b.receipt.sequence,
  );
  return keyed.map(({ receipt }) => receipt);
}
