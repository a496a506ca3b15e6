/** Building blocks the operations share: schemas, reading with the wall, and turns with credentials. */
import { z } from 'zod';
import type { RoomCommand } from '../../machines/room.events.js';
import { actorOf, type Caller, credentialHash, requireActor, resolveCaller } from '../auth/caller.js';
import { addressGroup } from '../auth/client-address.js';
import { authorizeRead } from '../auth/read-gate.js';
import { hashSecret } from '../auth/secrets.js';
import type { RoomState } from '../domain/state.js';
import type { Actor } from '../domain/types.js';
import type { Reader } from '../domain/views/common.js';
import { canonicalJson } from '../receipts/index.js';
import { ResponseSeal } from '../runtime/idempotency-seal.js';
import { type IdempotencySpec, roomNotFound } from '../runtime/registry.js';
import type { RequestContext } from './types.js';

export const slugSchema = z
  .string()
  .min(1)
  .max(64)
  .describe('The room slug: the short id in the room URL, returned by create_room and given in invites.');

/** A decision selector: the decision's seq as a JSON integer, or a string of decimal digits (docs/concepts.md, Decisions and slates). */
export const seqSelector = z
  .union([z.number().int().min(1), z.string().regex(/^[1-9][0-9]{0,8}$/, 'must be a decision number')])
  .transform((v) => Number(v))
  .describe(
    'The decision number (its room-local seq, as a JSON integer or a string of digits); omit to target the oldest open decision.',
  );

export const slugInput = z.object({ slug: slugSchema });

/**
 * The idempotency scope of a request, its fingerprint and the seal of its stored response. Only the
 * scope hash, the keyed fingerprint and the sealed body are stored (runtime/idempotency-seal.ts).
 */
export function idempotencyFor(ctx: RequestContext, slug: string | null): IdempotencySpec | undefined {
  if (ctx.idempotencyKey === undefined) return undefined;
  // Anonymous callers are scoped, and credentials bound, by the client's address group (an IPv6 /64).
  const group = addressGroup(ctx.clientIp);
  const credential = credentialHash(ctx.credentials) ?? `ip:${group}`;
  const scope = `${slug ?? '-'}|${hashSecret(`${credential}\n${ctx.operationScope}\n${ctx.idempotencyKey}`)}`;
  const seal = new ResponseSeal({
    idempotencyKey: ctx.idempotencyKey,
    credentialScope: credential,
    operation: ctx.operationScope,
    clientAddress: group,
    exactClientAddress: ctx.clientIp,
  });
  return { scope, fingerprint: seal.fingerprint(fingerprintOf(ctx.fingerprintSource ?? {})), seal };
}

/**
 * The request fingerprint (docs/agents.md, The REST loop): the JCS text of what the caller sent. Inputs are checked for JCS at
 * the door; should anything slip past, a deterministic non-JCS form keeps the request answerable.
 */
function fingerprintOf(source: unknown): string {
  try {
    return canonicalJson(source);
  } catch {
    return `~${JSON.stringify(source, (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value))}`;
  }
}

export function readerOf(state: RoomState, caller: Caller): Reader {
  const actor = actorOf(state, caller);
  if (caller.kind === 'member') {
    return { participantId: caller.member.id, role: caller.member.role, actor };
  }
  return { participantId: null, role: 'observer', actor };
}

/**
 * Committed state of a readable room for this caller (seals what is due first). A member reading the
 * room consumes the opener-seal wakes of the decisions it opened (docs/agents.md, The REST loop); replays pass
 * `{ seesRoom: false }` because reading events is not reading the room.
 */
export async function readRoom(
  ctx: RequestContext,
  slug: string,
  options: { seesRoom?: boolean } = {},
): Promise<{ state: RoomState; caller: Caller; reader: Reader }> {
  const state = await ctx.services.registry.read(slug);
  if (!state) throw roomNotFound(slug);
  const caller = await authorizeRead(state, ctx.credentials, ctx.services.auth, ctx.clientIp);
  if (caller.kind === 'member' && options.seesRoom !== false) {
    ctx.services.presence.mark(slug, caller.member.id, ctx.services.clock.now());
    await ctx.services.engagement.consumeOnRead(state, caller.member.id);
  }
  return { state, caller, reader: readerOf(state, caller) };
}

/** Seat acts are never exempt from config.auth; other acts accept operator credentials whatever it says (docs/concepts.md, Mandates). */
const SEAT_ACTS = new Set(['discuss', 'propose', 'choose', 'abstain']);

export interface ActSpec<R> {
  action: string;
  route: string;
  build(state: RoomState, actor: Actor, now: number): RoomCommand;
  render(info: Record<string, unknown>, state: RoomState, now: number): R;
}

/** An act by a credentialed caller: authenticate, idempotency, command, render — one room turn. */
export async function act<R extends Record<string, unknown>>(
  ctx: RequestContext,
  slug: string,
  spec: ActSpec<R>,
): Promise<R> {
  let now = 0;
  const turn = await ctx.services.registry.execute(slug, {
    prepare: (state, at) => {
      now = at;
      const use = SEAT_ACTS.has(spec.action) ? 'seat' : 'operator';
      const caller = resolveCaller(state, ctx.credentials, ctx.services.auth, use);
      const actor = requireActor(state, caller, spec.action, spec.route);
      return { command: spec.build(state, actor, at), idempotency: idempotencyFor(ctx, slug) };
    },
    render: (info, state) => spec.render(info, state, now),
  });
  ctx.replayed = turn.replayed;
  return turn.result;
}
