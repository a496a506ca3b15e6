/**
 * A cached room: its actor and what this process knows of the room's stored version
 * (docs/architecture.md, The write path). Entries are made here, from a creation's input or a
 * stored snapshot; the cache (room-cache.ts) keeps them.
 */
import { type Snapshot, type Actor as XActor, createActor } from 'xstate';
import { type RoomInput, roomMachine } from '../../machines/room.machine.js';
import type { DecisionData } from '../domain/types.js';
import { type RoomState, roomStateOf } from './room-state.js';
import { readSnapshot } from './snapshot-format.js';

export type RoomActor = XActor<typeof roomMachine>;

export interface Entry {
  slug: string;
  actor: RoomActor;
  version: number;
  /** The store's revision of that version (Redis), so a divergent history at the same count is caught. */
  revision: string | undefined;
  head: number;
  /** The snapshot text last committed; the actor is rebuilt from it after a rejected command. */
  snapshotText: string;
  /** Resolved decisions that left the actor for append-only storage, by id. */
  archived: Map<string, DecisionData>;
  /** Ids archived by the batch being committed: forgotten again if that commit fails. */
  archiving: string[];
  /** The stored snapshot is in an older shape, or behind an eventless change: the next batch commits. */
  stale: boolean;
  /** Characters of the archived decisions' stored JSON (part of the cache weight, see weightOf). */
  archivedChars: number;
  /**
   * The read model of the last committed version, built when it was committed or loaded. Reads
   * answer from it, never from the actor, which a running batch moves before it commits and a
   * rebuild replaces (docs/architecture.md, "One room, many readers").
   */
  committed: RoomState;
}

/** A room not stored yet: the initial actor of a creation, at version 0. */
export function newEntry(input: RoomInput): Entry {
  const actor = createActor(roomMachine, { input });
  actor.start();
  return {
    slug: input.slug,
    actor,
    version: 0,
    revision: undefined,
    head: 0,
    snapshotText: '',
    archived: new Map(),
    archiving: [],
    stale: false,
    archivedChars: 0,
    committed: roomStateOf(actor.getSnapshot(), 0, 0),
  };
}

/**
 * The state of the entry's actor as it stands (before its batch commits). `pendingEvents`: events
 * about to be committed, so a rendered response reports the head it will have.
 */
export function stateOf(entry: Entry, pendingEvents = 0): RoomState {
  return roomStateOf(entry.actor.getSnapshot(), entry.version, entry.head + pendingEvents, entry.archived);
}

/** The actor of a stored snapshot; `stale` when the text is in an older shape (see snapshot-format.ts). */
export function restoreActor(snapshotText: string): { actor: RoomActor; stale: boolean } {
  const { snapshot, upgraded } = readSnapshot(snapshotText);
  // Restoring from a snapshot never reads input; the option is typed as required only for fresh actors.
  const actor = createActor(roomMachine, {
    snapshot: snapshot as unknown as Snapshot<unknown>,
    input: undefined as unknown as RoomInput,
  });
  actor.start();
  return { actor, stale: upgraded };
}
