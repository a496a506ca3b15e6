/** Builds the read model (domain/state.ts) from a room actor's snapshot and its decision children. */
import type { AnyActorRef, SnapshotFrom } from 'xstate';
import { decisionPhase } from '../../machines/decision.machine.js';
import type { RoomMachine } from '../../machines/room.machine.js';
import type { RoomState } from '../domain/state.js';
import type { DecisionData } from '../domain/types.js';

export * from '../domain/state.js';

/**
 * `archived`: resolved decisions that left the room's live actors for append-only storage
 * (the registry keeps them beside the actor); a decision still among the children wins.
 */
export function roomStateOf(
  snapshot: SnapshotFrom<RoomMachine>,
  version: number,
  head: number,
  archived: ReadonlyMap<string, DecisionData> = new Map(),
): RoomState {
  const children = snapshot.children as Record<string, AnyActorRef | undefined>;
  const room = snapshot.context;
  const decisions = room.decisionIds.map((id) => {
    const child = children[id];
    if (!child) {
      const data = archived.get(id);
      if (data) return { data, phase: 'resolved' as const };
      throw new Error(`decision ${id} missing from room ${room.slug}`);
    }
    const s = child.getSnapshot() as { context: DecisionData; value: unknown };
    return { data: s.context, phase: decisionPhase(s.value) };
  });
  return {
    slug: room.slug,
    version,
    head,
    room,
    decisions,
    concluded: snapshot.matches('concluded') || snapshot.matches('concluding'),
  };
}
