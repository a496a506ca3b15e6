import type { AskInput } from '../src/domain/room-acts.js';
import type { Actor, JoinVia, ReceiptLink, Role, Stance } from '../src/domain/types.js';
import type { ErrorSpec } from '../src/errors.js';
import type { DecisionReport } from './decision.events.js';

export interface SeatRequest {
  /** Fresh participant id, minted by the caller (machines never generate randomness). */
  id: string;
  tokenHash: string | null;
  displayName: string | null;
  role: Role;
  via: JoinVia;
  agentDid: string | null;
  /** The verified issuer of the joining mandate; null without one. */
  agentIss?: string | null;
  mandateId: string | null;
  /**
   * A seat stored before seats recorded their issuer that the joining mandate proved it reaches
   * (auth/seat-binding.ts): the join reconnects to it. Seats bound to an issuer need no such hint.
   */
  provenSeatId?: string | null;
}

export interface InviteRequest {
  code: string;
  tokenHash: string;
  label: string;
  role: Role;
  expected: boolean;
  expiresAt: number | null;
  binding: { kind: 'token' | 'principal' | 'account'; value: string | null };
}

export interface Admission {
  /** A password was presented in the join body. */
  passwordGiven: boolean;
  /** The presented password matched the room's (checked outside: scrypt is slow). */
  passwordOk: boolean;
  /** SHA-256 of the presented invite token, when one was presented. */
  inviteHash?: string | undefined;
  /** The joiner's mandate issuer and hosted account, for principal/account-bound invites. */
  principal?: string | null;
  account?: string | null;
}

/** Commands sent to a room. `invalid` carries a field-validation failure, reported at its place in the check order. */
export type RoomCommand =
  | { type: 'JOIN'; now: number; seat: SeatRequest; admission: Admission }
  | {
      type: 'ASK';
      now: number;
      actor: Actor;
      decisionId: string;
      input: AskInput | null;
      invalid?: ErrorSpec;
      /** The first decision of a question-first room, opened by creation itself. */
      atCreation?: boolean;
    }
  | { type: 'START_CHOOSING'; now: number; actor: Actor; decisionId?: string; decision?: number; invalid?: ErrorSpec }
  | {
      type: 'DISCUSS';
      now: number;
      actor: Actor;
      messageId: string;
      body: string;
      stance: Stance | null;
      decision?: number;
      invalid?: ErrorSpec;
    }
  | { type: 'PROPOSE'; now: number; actor: Actor; option: string; decision?: number; invalid?: ErrorSpec }
  | {
      type: 'CHOOSE';
      now: number;
      actor: Actor;
      choice: unknown;
      reason: string | null;
      decision?: number;
      invalid?: ErrorSpec;
    }
  | { type: 'ABSTAIN'; now: number; actor: Actor; reason: string; decision?: number; invalid?: ErrorSpec }
  | { type: 'CLOSE'; now: number; actor: Actor; statement: string | null; invalid?: ErrorSpec }
  | { type: 'INVITE'; now: number; actor: Actor; invite: InviteRequest | null; invalid?: ErrorSpec }
  | { type: 'REVOKE_INVITE'; now: number; actor: Actor; code: string }
  | { type: 'SET_ROLE'; now: number; actor: Actor; target: string; role: Role; invalid?: ErrorSpec }
  | { type: 'UPDATE_SETTINGS'; now: number; actor: Actor; settings: unknown; invalid?: ErrorSpec };

/** Commands the runtime sends to advance time and record signatures. */
export type RoomInternal =
  | { type: 'ADVANCE'; decisionId: string; now: number }
  /** An expected invite expired at `now`: open decisions re-evaluate the roster gate. */
  | { type: 'ROSTER_CHECK'; now: number }
  | { type: 'RECEIPT_SIGNED'; decisionId: string | null; link: ReceiptLink }
  /** A resolved decision, now stored append-only by the runtime, leaves the room's live actors. */
  | { type: 'ARCHIVE'; decisionId: string };

export type RoomEvent = RoomCommand | RoomInternal | DecisionReport;

/** What the room emits to the runtime while it processes one event. */
export type RoomEmitted =
  | { type: 'reply'; ok: true; info: Record<string, unknown> }
  | { type: 'reply'; ok: false; error: ErrorSpec }
  | { type: 'event'; draft: import('../src/domain/types.js').EventDraft }
  | { type: 'seal'; decisionId: string }
  | { type: 'conclude' };
