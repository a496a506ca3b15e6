/**
 * Room snapshots written by earlier versions, brought to the current shape when they are loaded.
 * Each step recognises its input by shape, so it is idempotent: loading twice, or crashing between
 * a load and the next commit, is harmless. A room loaded in an older shape commits the current one
 * on its next turn, and at start-up `upgrade.ts` gives every such room that turn. Every step ships
 * with a test on data written by the code before it (test/integration/runtime/snapshot-format.test.ts).
 */
import { emptySpeech, withMessage } from '../domain/room-acts.js';
import type { Message, Speech } from '../domain/types.js';

interface PersistedRoom {
  context: Record<string, unknown> & { openDecisionIds?: string[] };
  [key: string]: unknown;
}

/**
 * Parses a stored snapshot and upgrades it to the current shape; `upgraded` says the stored text is
 * in an older shape (or holds resolved decisions, which the next turn archives).
 */
export function readSnapshot(text: string): { snapshot: PersistedRoom; upgraded: boolean } {
  const stored = JSON.parse(text) as PersistedRoom;
  const snapshot = discussionToSpeech(stored);
  return { snapshot, upgraded: snapshot !== stored || holdsResolvedDecisions(stored) };
}

/**
 * Until resolved decisions were archived (stored append-only), their actors stayed children of the
 * room. The registry archives them on the room's next turn; here they only mark the room as stale.
 */
function holdsResolvedDecisions(snapshot: PersistedRoom): boolean {
  const children = (snapshot.children ?? {}) as Record<string, { snapshot?: { value?: unknown } }>;
  return Object.values(children).some((child) => child.snapshot?.value === 'resolved');
}

/**
 * Until this version the room context held every message (`discussion`), so each commit rewrote
 * the room's whole discussion. The messages are all in the event log already; the context keeps
 * `speech`: counters and the newest messages.
 */
function discussionToSpeech(snapshot: PersistedRoom): PersistedRoom {
  const { discussion, ...context } = snapshot.context;
  if (!Array.isArray(discussion)) return snapshot;
  let speech: Speech = emptySpeech();
  for (const message of discussion as Message[]) speech = withMessage(speech, message, message.postedAt);
  // Counters serve the caps of open decisions; sealed ones carry their count in their receipt.
  const open = new Set(context.openDecisionIds ?? []);
  speech.byDecision = Object.fromEntries(Object.entries(speech.byDecision).filter(([id]) => open.has(id)));
  return { ...snapshot, context: { ...context, speech } };
}
