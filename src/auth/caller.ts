/**
 * Turns the credentials presented on a request into the caller of a room: a member seat (by token
 * or by mandate), the admin token, a mandate without a seat, a password reader or an anonymous
 * reader (docs/concepts.md, Credentials). A presented credential must be valid even where
 * anonymous access would be allowed, and the room's `config.auth` decides which kinds it accepts.
 * Mandates are verified before this point (operations/run.ts); here they are only mapped to seats.
 */
import { memberById, memberByTokenHash } from '../domain/roster.js';
import type { RoomState } from '../domain/state.js';
import type { Actor, AuthMode, Member } from '../domain/types.js';
import { type ProtocolError, protocolError } from '../errors.js';
import type { VerifiedMandate } from './mandates.js';
import { mandateSeat } from './seat-binding.js';
import { hashSecret, sameHash } from './secrets.js';

export interface PresentedCredentials {
  bearer?: string | undefined;
  mandate?: string | undefined;
  password?: string | undefined;
  /** The presented mandate once verified for this call. */
  verified?: VerifiedMandate | undefined;
  /** Set once the credential matched a seat or the admin token: the rate limits may trust it (known-credentials.ts). */
  seatProven?: boolean | undefined;
}

export type Caller =
  | { kind: 'member'; member: Member; credentialHash: string; mandate: VerifiedMandate | null }
  | { kind: 'admin'; credentialHash: string }
  /** A valid mandate whose (issuer, subject) holds no seat in this room. */
  | { kind: 'outsider'; credentialHash: string; mandate: VerifiedMandate }
  | { kind: 'password' }
  | { kind: 'anonymous' };

/** What the credential is used for: the room's `config.auth` treats these differently (docs/concepts.md, Mandates). */
export type CallUse = 'seat' | 'read' | 'operator';

export interface AuthSettings {
  /** SHA-256 hex of the configured admin token, or null when none is configured. */
  adminTokenHash: string | null;
}

export function credentialHash(presented: PresentedCredentials): string | null {
  if (presented.mandate) return hashSecret(presented.mandate);
  if (presented.bearer) return hashSecret(presented.bearer);
  return null;
}

export function mandateNotAccepted(slug: string): ProtocolError {
  return protocolError(
    'auth.mandate_not_accepted',
    `Room ${slug} accepts participant tokens only (config.auth is "token_only"): drop X-Mandate and send Authorization: Bearer <participant token>.`,
    { details: { auth: 'token_only' } },
  );
}

export function mandateRequired(slug: string): ProtocolError {
  return protocolError(
    'auth.mandate_required',
    `Room ${slug} requires a mandate for this call (config.auth is "mandate_required"): send the mandate in X-Mandate (REST) or _meta.mandate (MCP).`,
    { details: { auth: 'mandate_required' } },
  );
}

function tokenCaller(state: RoomState, bearer: string, settings: AuthSettings): Caller {
  const hash = hashSecret(bearer);
  if (settings.adminTokenHash && sameHash(hash, settings.adminTokenHash))
    return { kind: 'admin', credentialHash: hash };
  const member = memberByTokenHash(state.room.members, hash);
  if (member) return { kind: 'member', member, credentialHash: hash, mandate: null };
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

function mandateCaller(state: RoomState, presented: PresentedCredentials): Caller {
  const mandate = presented.verified;
  if (!mandate) throw new Error('a presented mandate must be verified before resolving the caller');
  const credential = hashSecret(presented.mandate!);
  // A seat of another issuer naming the same subject is not this mandate's: until this mandate's
  // issuer joins (a seat of its own), it holds no seat here, an outsider like any unseated mandate.
  const seat = mandateSeat(state.room.members, mandate);
  return seat.kind === 'seat'
    ? { kind: 'member', member: seat.member, credentialHash: credential, mandate }
    : { kind: 'outsider', credentialHash: credential, mandate };
}

/** docs/concepts.md, Mandates: which credential kinds the room accepts for this use; operator credentials are exempt outside seat acts. */
function enforceAuthMode(state: RoomState, caller: Caller, use: CallUse): void {
  const mode = state.room.config.auth;
  if (mode === 'either') return;
  const viaMandate = caller.kind === 'outsider' || (caller.kind === 'member' && caller.mandate !== null);
  const operatorCredential =
    caller.kind === 'admin' || (caller.kind === 'member' && !viaMandate && caller.member.isCreator);
  if (use !== 'seat' && operatorCredential) return;
  if (viaMandate && mode === 'token_only') throw mandateNotAccepted(state.slug);
  if (!viaMandate && mode === 'mandate_required' && caller.kind === 'member') throw mandateRequired(state.slug);
}

/**
 * Whether the room's `config.auth` refuses, for reads, every credential that reaches this seat (the
 * matrix of enforceAuthMode): under `token_only` a seat without a token (a mandate seat), under
 * `mandate_required` a seat no mandate reaches, unless it is the creator's (its token is an operator
 * credential, which reads whatever the mode). A seat's webhooks stop when this turns true
 * (docs/architecture.md, Engagement). An expired mandate or a rotated token refuses nothing here: the
 * seat's holder can present a new one.
 */
export function authRefusesSeat(member: Member, mode: AuthMode): boolean {
  if (mode === 'token_only') return member.tokenHash === null;
  if (mode === 'mandate_required') return member.agentDid === null && !member.isCreator;
  return false;
}

/**
 * The caller of a room. When both a token and a mandate are presented the mandate path is used for
 * authorization and attribution; a hosted key (`rk_…`) beside a mandate only adds account identity.
 */
export function resolveCaller(
  state: RoomState,
  presented: PresentedCredentials,
  settings: AuthSettings,
  use: CallUse = 'read',
): Caller {
  let caller: Caller;
  if (presented.mandate) caller = mandateCaller(state, presented);
  else if (presented.bearer) caller = tokenCaller(state, presented.bearer, settings);
  else return { kind: 'anonymous' };
  if (caller.kind === 'member' || caller.kind === 'admin') presented.seatProven = true;
  enforceAuthMode(state, caller, use);
  return caller;
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
    `The ${action} action (${route}) needs a credential: send Authorization: Bearer <participant token> (from the join or create response), or a mandate in X-Mandate.`,
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
    agentId: caller.mandate?.sub ?? `participant:${member.id}`,
    mandateRef: caller.mandate?.jti ?? null,
    agentIss: caller.mandate?.issuerPrincipal ?? null,
    // A mandate alone is never an operator credential (docs/concepts.md, Credentials).
    isOperator: member.isCreator && caller.mandate === null,
    isAdmin: false,
  };
}

/** The actor of an act: requires a seat (member) or the admin token. */
export function requireActor(state: RoomState, caller: Caller, action: string, route: string): Actor {
  const actor = actorOf(state, caller);
  if (actor) return actor;
  if (caller.kind === 'outsider') {
    throw protocolError(
      'authority.denied',
      `This mandate's subject holds no seat in room ${state.slug}: join first (POST /api/rooms/${state.slug}/join with the mandate), then ${action} (${route}).`,
      { details: { authority: 'seat', required: 'member' } },
    );
  }
  throw authRequired(action, route);
}
