import type { ErrorSpec } from '../src/errors.js';
import type { Actor, DecisionFacts, EventDraft, ReceiptLink } from '../src/domain/types.js';

/** Events a room sends to one of its decision actors. Every event that depends on time carries `now`. */
export type DecisionEvent =
  | { type: 'D.CHOOSE'; now: number; actor: Actor; choice: unknown; reason: string | null; facts: DecisionFacts }
  | { type: 'D.ABSTAIN'; now: number; actor: Actor; reason: string; facts: DecisionFacts }
  | { type: 'D.PROPOSE'; now: number; actor: Actor; option: string; facts: DecisionFacts }
  | { type: 'D.START_CHOOSING'; now: number; actor: Actor; facts: DecisionFacts }
  | { type: 'D.ADVANCE'; now: number; facts: DecisionFacts }
  | { type: 'D.EVALUATE'; now: number; facts: DecisionFacts }
  | { type: 'D.RECEIPT'; link: ReceiptLink };

/** What a decision tells its room. */
export type DecisionReport =
  | {
      type: 'D.ACCEPT';
      decisionId: string;
      info: Record<string, unknown>;
      /** Set when a ballot was accepted: the room records when the seat last chose. */
      voter?: { participantId: string; at: number };
    }
  | { type: 'D.REJECT'; decisionId: string; error: ErrorSpec }
  | { type: 'D.EVENT'; draft: EventDraft }
  | { type: 'D.SEALED'; decisionId: string; at: number }
  | { type: 'D.RESOLVED'; decisionId: string; link: ReceiptLink };
