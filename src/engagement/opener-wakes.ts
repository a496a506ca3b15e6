/**
 * Opener-seal wake bookkeeping (docs/agents.md, The REST loop): the wake for a sealed decision is delivered to its opener at
 * most once, and is consumed by a delivery to a wait > 0 or by the opener reading the room or outcome.
 */
import type { DecisionState, RoomState } from '../domain/state.js';
import type { EngagementStore } from '../store/engagement-port.js';
import { sealedOpenedBy } from './actionable.js';

/** The oldest sealed decision this participant opened whose wake is not consumed yet. */
export async function pendingOpenerSeal(
  store: EngagementStore,
  state: RoomState,
  participantId: string,
): Promise<DecisionState | null> {
  const sealed = sealedOpenedBy(state, participantId);
  if (sealed.length === 0) return null;
  const consumed = new Set(await store.consumedOpenerWakes(state.slug, participantId));
  return sealed.find((d) => !consumed.has(d.data.id)) ?? null;
}

/** Consumes one wake; true only for the caller that consumed it first. */
export async function claimOpenerSeal(
  store: EngagementStore,
  slug: string,
  participantId: string,
  decisionId: string,
): Promise<boolean> {
  return (await store.consumeOpenerWakes(slug, participantId, [decisionId])) === 1;
}

/** The opener read the room or its outcome with its own credential: every wake it could see is consumed. */
export async function consumeOnRead(store: EngagementStore, state: RoomState, participantId: string): Promise<void> {
  const sealed = sealedOpenedBy(state, participantId);
  if (sealed.length === 0) return;
  const consumed = new Set(await store.consumedOpenerWakes(state.slug, participantId));
  const fresh = sealed.map((d) => d.data.id).filter((id) => !consumed.has(id));
  if (fresh.length > 0) await store.consumeOpenerWakes(state.slug, participantId, fresh);
}
