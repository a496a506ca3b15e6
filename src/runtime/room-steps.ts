/**
 * Moving a room's actor (docs/architecture.md, The write path): one event and everything it causes,
 * receipts signed in seal order and fed back; and the work time has made due.
 */
import type { RoomEmitted } from '../../machines/room.events.js';
import { iso } from '../domain/format.js';
import type { EventDraft } from '../domain/types.js';
import type { Keyring } from '../receipts/index.js';
import type { ArchivedDecision, StoredReceipt } from '../store/port.js';
import { type Entry, type RoomActor, stateOf } from './room-entry.js';
import { decisionById, dueWork, type RoomState } from './room-state.js';
import { signConclusionReceipt, signDecisionReceipt } from './sealing.js';

/** What moving the actor produced: the reply, the events and receipts to commit, the archived decisions. */
export interface Collected {
  reply: RoomEmitted | null;
  drafts: EventDraft[];
  receipts: StoredReceipt[];
  archived: ArchivedDecision[];
}

export const nothingCollected = (): Collected => ({ reply: null, drafts: [], receipts: [], archived: [] });

/** Who signs the receipts a step seals. */
export interface Signer {
  keyring: Keyring;
  /** The public base URL (a function: tests learn the port only after listening). */
  baseUrl: () => string;
}

/** Sends what time made due (ADVANCE, ROSTER_CHECK) in instant order, ties by seq, until nothing is due. */
export function advance(entry: Entry, now: number, signer: Signer): Collected {
  const total: Collected = nothingCollected();
  for (let guard = 0; guard < 1000; guard++) {
    const due = dueWork(stateOf(entry), now);
    if (!due) break;
    const before = JSON.stringify(entry.actor.getPersistedSnapshot());
    const step = send(
      entry,
      due.kind === 'roster'
        ? { type: 'ROSTER_CHECK', now: due.at }
        : { type: 'ADVANCE', decisionId: due.id, now: due.at },
      signer,
    );
    total.drafts.push(...step.drafts);
    total.receipts.push(...step.receipts);
    if (JSON.stringify(entry.actor.getPersistedSnapshot()) === before) {
      throw new Error(`room ${entry.slug}: ${due.kind} work due at ${iso(due.at)} did not advance`);
    }
  }
  return total;
}

/** Sends one event and everything it causes: receipts are signed in seal order and fed back. */
export function send(entry: Entry, event: Parameters<RoomActor['send']>[0], signer: Signer): Collected {
  const collected: Collected = nothingCollected();
  const queue: RoomEmitted[] = [];
  const subscription = entry.actor.on('*', (emitted) => {
    const e = emitted as RoomEmitted;
    if (e.type === 'reply') collected.reply ??= e;
    else if (e.type === 'event') collected.drafts.push(e.draft);
    else queue.push(e);
  });
  try {
    entry.actor.send(event);
    while (queue.length > 0) {
      const next = queue.shift()!;
      const state = stateOf(entry);
      if (next.type === 'seal') {
        const decision = decisionById(state, next.decisionId);
        if (!decision) throw new Error(`sealed decision ${next.decisionId} not found`);
        const receipt = signDecisionReceipt(state, decision, signer.keyring, signer.baseUrl());
        collected.receipts.push(receipt);
        entry.actor.send({ type: 'RECEIPT_SIGNED', decisionId: next.decisionId, link: linkOf(receipt, state) });
      } else if (next.type === 'conclude') {
        const receipt = signConclusionReceipt(state, signer.keyring, signer.baseUrl());
        collected.receipts.push(receipt);
        entry.actor.send({ type: 'RECEIPT_SIGNED', decisionId: null, link: linkOf(receipt, state) });
      }
    }
  } finally {
    subscription.unsubscribe();
  }
  const error = entry.actor.getSnapshot().error;
  if (error) throw error;
  return collected;
}

function linkOf(receipt: StoredReceipt, state: RoomState) {
  return { sequence: receipt.sequence, hash: receipt.receipt_hash, prevHash: state.room.chain.head };
}
