/**
 * The read wall (docs/concepts.md, Rooms): who may read a room on every read surface, and the exact sliver an
 * outsider learns about an unlisted or private room.
 */
import { protocolError, type ProtocolError } from '../errors.js';
import type { RoomState } from '../domain/state.js';
import { type AuthSettings, type Caller, type PresentedCredentials, resolveCaller } from './caller.js';
import { verifyPassword } from './secrets.js';

export function joinRequired(state: RoomState): ProtocolError {
  const { room } = state;
  return protocolError(
    'room.join_required',
    `Room ${room.slug} is ${room.config.visibility}: reading it requires a seat. Join it (POST /api/rooms/${room.slug}/join), then read again with the participant token as a bearer token.`,
    {
      hint: 'Join the room, then read again with your participant token.',
      details: {
        slug: room.slug,
        visibility: room.config.visibility,
        join_required: true,
        password_supported: room.passwordHash !== null,
      },
    },
  );
}

export function wrongPassword(slug: string): ProtocolError {
  return protocolError(
    'auth.invalid_password',
    `The room password for ${slug} is wrong. Check it, or join the room with an invite.`,
  );
}

/** Resolves the caller of a read and enforces the wall; throws 401/403 protocol errors. */
export async function authorizeRead(
  state: RoomState,
  presented: PresentedCredentials,
  settings: AuthSettings,
  clientAddress?: string,
): Promise<Caller> {
  const caller = resolveCaller(state, presented, settings, 'read');
  // A valid mandate whose subject holds no seat opens nothing an anonymous reader could not read.
  if (caller.kind !== 'anonymous' && caller.kind !== 'outsider') return caller;
  const { room } = state;
  if (presented.password !== undefined && room.passwordHash !== null) {
    if (await verifyPassword(presented.password, room.passwordHash, clientAddress)) return { kind: 'password' };
    throw wrongPassword(room.slug);
  }
  if (room.config.visibility === 'public') return caller;
  throw joinRequired(state);
}
