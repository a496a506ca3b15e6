/**
 * What callers of the room registry hand in and get back (docs/architecture.md, The write path):
 * a turn's spec and result, the idempotency of a keyed request, the notice of a commit, and the
 * registry's dependencies. `registry.ts` re-exports them; the write path's modules share them.
 */
import type { RoomCommand } from '../../machines/room.events.js';
import type { Keyring } from '../receipts/index.js';
import type { RoomStore, StoredEvent } from '../store/port.js';
import type { Clock } from './clock.js';
import type { ResponseSeal } from './idempotency-seal.js';
import type { RoomState } from './room-state.js';

export interface IdempotencySpec {
  scope: string;
  /** The request fingerprint, keyed by the seal (it may contain a password or an invite). */
  fingerprint: string;
  /** Seals the stored response so that only this scope's client can open it (idempotency-seal.ts). */
  seal: ResponseSeal;
}

export interface TurnSpec<R> {
  /** Authenticates against the current state and builds the command; throws ProtocolError to refuse. */
  prepare(state: RoomState, now: number): { command: RoomCommand | null; idempotency?: IdempotencySpec | undefined };
  /** Builds the response from the machine's reply and the state after the command (before commit). */
  render(info: Record<string, unknown>, state: RoomState): R;
}

export interface TurnResult<R> {
  result: R;
  replayed: boolean;
}

export interface CommitNotice {
  slug: string;
  head: number;
  events: StoredEvent[];
  nextDeadline: number | null;
  /** The room's first commit (its creation). */
  created: boolean;
  /** Receipts signed in this commit. */
  receipts: number;
  /** The state committed (the metrics read mechanisms and outcomes from it). */
  state: RoomState;
  /** False when the store saw no webhook subscriptions at the commit (RoomRecord.subscribed). */
  subscribed?: boolean;
}

export interface RuntimeDeps {
  store: RoomStore;
  clock: Clock;
  keyring: Keyring;
  /** The public base URL (a function: tests learn the port only after listening). */
  baseUrl: () => string;
  /** Called after every commit: wake waiters, push streams, enqueue webhooks, arm timers. */
  onCommit?: (notice: CommitNotice) => void;
  /** Called after every batch: its turns, and how long its commit took (null when nothing was written). */
  onBatch?: (turns: number, commitSeconds: number | null) => void;
  /** After each wait for a room lock: how long, and whether it was taken (false: gave up, 503). */
  onLock?: (waitSeconds: number, acquired: boolean) => void;
  /** A commit refused by the version check or the fence; the turn runs again on fresh state. */
  onConflict?: () => void;
  /** A room deleted for good. */
  onRemove?: (slug: string) => void;
  maxCachedRooms?: number;
  /**
   * What the cached room actors may weigh together (weightOf: an estimate of their resident bytes).
   * The least recently used are evicted past it, so a few huge rooms cannot take the process's memory.
   */
  maxCachedBytes?: number;
}
