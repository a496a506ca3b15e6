/** From engine vocabulary to receipt vocabulary (docs/receipts.md). */
import type { EngineOutput } from './types.js';

export type ReceiptStatus = 'completed' | 'rejected' | 'tied' | 'no_quorum';

/** `responses` is R (choices + abstentions); with no response at all the receipt is always no_quorum. */
export function receiptStatus(output: EngineOutput, responses: number): ReceiptStatus {
  if (responses === 0) return 'no_quorum';
  switch (output.outcome) {
    case 'pass':
    case 'plurality_pass':
      return 'completed';
    case 'tied':
      return 'tied';
    case 'no_pass':
      return output.quorum_met ? 'rejected' : 'no_quorum';
  }
}

export interface ReceiptOutcome {
  status: ReceiptStatus;
  winning_option: string | null;
  tallies: Record<string, number>;
}

/** The `status`, `winning_option` and `tallies` a receipt records for this result. */
export function receiptOutcome(output: EngineOutput, responses: number): ReceiptOutcome {
  return {
    status: receiptStatus(output, responses),
    winning_option: responses === 0 ? null : output.winner,
    tallies: output.per_option_score,
  };
}
