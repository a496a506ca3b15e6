/**
 * The archive cache: resolved decisions that left a room's actor for append-only storage, kept
 * beside the cached actor so reads see one RoomState (docs/architecture.md, "What a snapshot holds").
 */
import type { AnyActorRef } from 'xstate';
import { decisionPhase } from '../../machines/decision.machine.js';
import type { DecisionData } from '../domain/types.js';
import type { ArchivedDecision, RoomStore } from '../store/port.js';
import type { Entry, RoomActor } from './room-entry.js';

/**
 * The resolved decisions of a room restored from the store. The archive is append-only, so a room
 * already cached reads only from the first archived decision it does not know (decisions resolve
 * in any order), and nothing when it knows them all — unless the cache knew another history (a
 * Redis failover can leave one behind): then a decision of the snapshot is still missing, and the
 * whole archive is read again.
 */
export async function archiveOf(
  store: RoomStore,
  slug: string,
  actor: RoomActor,
  cached: Entry | undefined,
): Promise<{ archived: Map<string, DecisionData>; chars: number }> {
  const known = cached ? committedArchive(cached) : new Map<string, DecisionData>();
  const knownChars = cached?.archivedChars ?? 0;
  const snapshot = actor.getSnapshot();
  const children = snapshot.children as Record<string, AnyActorRef | undefined>;
  const missing = snapshot.context.decisionIds.filter((id) => !children[id] && !known.has(id));
  const read = async (after: number, into: Map<string, DecisionData>, chars: number) => {
    for (const a of await store.archivedDecisions(slug, after)) {
      if (!into.has(a.decision_id)) chars += a.data.length;
      into.set(a.decision_id, JSON.parse(a.data) as DecisionData);
    }
    return { archived: into, chars };
  };
  if (missing.length === 0) return { archived: new Map(known), chars: knownChars };
  const seqOf = new Map(snapshot.context.decisions.map((d) => [d.id, d.seq]));
  const after = Math.min(...missing.map((id) => (seqOf.get(id) ?? 1) - 1));
  const found = await read(after, new Map(known), knownChars);
  if (missing.every((id) => found.archived.has(id))) return found;
  return read(0, new Map(), 0);
}

/**
 * Moves resolved decisions (receipt signed) out of the actor: their data joins the commit as
 * archived decisions and stays beside the actor for reads. Snapshots written before archiving
 * existed carry resolved decisions as children; the first batch on them archives those too.
 */
export function archiveResolved(entry: Entry, archivedByCommit: ArchivedDecision[]): void {
  const children = entry.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>;
  for (const [id, child] of Object.entries(children)) {
    const snapshot = child?.getSnapshot() as { value: unknown; context: DecisionData } | undefined;
    if (!snapshot || decisionPhase(snapshot.value) !== 'resolved') continue;
    archivedByCommit.push({ decision_id: id, seq: snapshot.context.seq, data: JSON.stringify(snapshot.context) });
    entry.archived.set(id, snapshot.context);
    entry.archivedChars += archivedByCommit.at(-1)!.data.length;
    entry.archiving.push(id);
    entry.actor.send({ type: 'ARCHIVE', decisionId: id });
  }
}

/** What a cached entry knows was archived by committed batches (not by one still committing). */
function committedArchive(entry: Entry): Map<string, DecisionData> {
  const archived = new Map(entry.archived);
  for (const id of entry.archiving) archived.delete(id);
  return archived;
}
