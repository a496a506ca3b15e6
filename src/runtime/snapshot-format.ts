/**
 * Room snapshots written by earlier versions, brought to the current shape when they are loaded.
 * Each step recognises its input by shape, so it is idempotent: loading twice, or crashing between
 * a load and the next commit, is harmless, and the room's next commit stores the current shape.
 * Every step ships with a test on data written by the code before it
 * (test/integration/runtime/snapshot-format.test.ts).
 */
import { emptySpeech, withMessage } from '../domain/room-acts.js';
import type { Message, Speech } from '../domain/types.js';

interface PersistedRoom {
  context: Record<string, unknown> & { openDecisionIds?: string[] };
  [key: string]: unknown;
}

/** Parses a stored snapshot and upgrades it to the current shape. */
export function readSnapshot(text: string): PersistedRoom {
  return discussionToSpeech(JSON.parse(text) as PersistedRoom);
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
