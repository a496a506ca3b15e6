/**
 * Turns the credentials presented on a request into the caller of a room: a member seat, the
 * admin token, a password reader or an anonymous reader (01-transport-and-auth.md §3–§5).
 * A presented credential must be valid even where anonymous access would be allowed.
 */
import { memberById } from '../domain/roster.js';
import type { Actor, Member } from '../domain/types.js';
import { protocolError, type ProtocolError } from '../errors.js';
import type { RoomState } from '../domain/state.js';
import { hashSecret, sameHash } from './secrets.js';

export interface PresentedCredentials {
  bearer?: string | undefined;
  mandate?: string | undefined;
  password?: string | undefined;
}

export type Caller =
  | { kind: 'member'; member: Member; credentialHash: string }
  | { kind: 'admin'; credentialHash: string }
  | { kind: 'password' }
  | { kind: 'anonymous' };

export interface AuthSettings {
  /** SHA-256 hex of the configured admin token, or null when none is configured. */
  adminTokenHash: string | null;
}

export function credentialHash(presented: PresentedCredentials): string | null {
  if (presented.mandate) return hashSecret(presented.mandate);
  if (presented.bearer) return hashSecret(presented.bearer);
  return null;
}

export function mandatesUnsupported(): ProtocolError {
  return protocolError(
    'auth.mandate_not_accepted',
    'This deployment does not accept mandates yet; use the participant token from the join response in Authorization: Bearer.',
    { details: { auth: 'token_only' } },
  );
}

/** Resolves bearer tokens (and, for now, refuses mandates). Password readers are resolved by the read gate. */
export function resolveCaller(state: RoomState, presented: PresentedCredentials, settings: AuthSettings): Caller {
  if (presented.mandate) throw mandatesUnsupported();
  if (!presented.bearer) return { kind: 'anonymous' };
  const hash = hashSecret(presented.bearer);
  if (settings.adminTokenHash && sameHash(hash, settings.adminTokenHash))
    return { kind: 'admin', credentialHash: hash };
  const member = state.room.members.find((m) => m.tokenHash !== null && m.tokenHash === hash);
  if (member) return { kind: 'member', member, credentialHash: hash };
  const superseded = state.room.members.find((m) => m.supersededHashes.includes(hash));
  if (superseded) {
    throw protocolError(
      'participant.token_superseded',
      "This token was the seat's credential until the seat was recovered by another session, which now holds it. Stand down: do not rejoin or keep acting with this token.",
      {
        hint: 'Another session holds this seat now; stop acting with this token.',
        details: { participant_id: superseded.id },
      },
    );
  }
  throw invalidToken(state.slug);
}

export function invalidToken(slug: string): ProtocolError {
  return protocolError(
    'auth.invalid_token',
    `The bearer token is not valid for room ${slug}. Tokens are scoped to one room: use the participant_token returned when you joined this room, or join it (POST /api/rooms/${slug}/join).`,
    { hint: 'Join the room to get a participant token for it.' },
  );
}

export function authRequired(action: string, route: string): ProtocolError {
  return protocolError(
    'auth.required',
    `The ${action} action (${route}) needs a credential: send Authorization: Bearer <participant token> (from the join or create response).`,
    { hint: 'Join the room first, then send the participant token as a bearer token.' },
  );
}

export function actorOf(state: RoomState, caller: Caller): Actor | null {
  if (caller.kind === 'admin') {
    return {
      participantId: null,
      displayName: 'operator',
      agentId: 'operator',
      mandateRef: null,
      isOperator: true,
      isAdmin: true,
    };
  }
  if (caller.kind !== 'member') return null;
  const member = memberById(state.room, caller.member.id)!;
  return {
    participantId: member.id,
    displayName: member.displayName,
    agentId: member.agentDid ?? `participant:${member.id}`,
    mandateRef: null,
    isOperator: member.isCreator,
    isAdmin: false,
  };
}

/** The actor of an act: requires a member or admin credential. */
export function requireActor(state: RoomState, caller: Caller, action: string, route: string): Actor {
  const actor = actorOf(state, caller);
  if (!actor) throw authRequired(action, route);
  return actor;
}
