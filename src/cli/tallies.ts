/**
 * The tallies of a sealed decision, read from its signed receipt (the outcome body carries the
 * receipt, not a separate tally): what `conclave room outcome` prints under each decision.
 */
import { Buffer } from 'node:buffer';

interface ReceiptOutcome {
  tallies?: Record<string, number>;
  diagnostics?: { cast_votes?: number; eligible_voters?: number };
}

/** `pizza 2 · sushi 1 — 3 of 4 chose`, or null for an open decision or a conclusion. */
export function tallyLine(receiptJws: unknown): string | null {
  if (typeof receiptJws !== 'string') return null;
  const outcome = receiptOutcome(receiptJws);
  if (!outcome?.tallies) return null;
  const entries = Object.entries(outcome.tallies).sort(([, a], [, b]) => b - a);
  const votes = outcome.diagnostics;
  const turnout =
    votes && typeof votes.cast_votes === 'number' && typeof votes.eligible_voters === 'number'
      ? `${votes.cast_votes} of ${votes.eligible_voters} chose`
      : null;
  if (entries.length === 0 && turnout === null) return null;
  const tally = entries.length === 0 ? 'no tallies' : entries.map(([option, n]) => `${option} ${n}`).join(' · ');
  return `tallies: ${tally}${turnout ? ` — ${turnout}` : ''}`;
}

function receiptOutcome(jws: string): ReceiptOutcome | null {
  const payload = jws.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      svc?: { outcome?: ReceiptOutcome };
    };
    return claims.svc?.outcome ?? null;
  } catch {
    return null;
  }
}
