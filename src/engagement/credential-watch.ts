/**
 * Keeps a parked connection (SSE stream, long-poll, MCP `wait`) honest about the credential it was
 * opened with. The connection re-checks that credential against every committed state it reads, so a
 * seat recovery that supersedes its token ends it at the next commit notice (the same notice that
 * would have woken it; on Redis, the cross-process fan-out carries it), instead of letting the
 * evicted session listen for up to 30 minutes. See docs/architecture.md, "Parked connections end
 * with their credential".
 */
import { resolveCaller, type AuthSettings, type PresentedCredentials } from '../auth/caller.js';
import { mandateExpired } from '../auth/mandate-errors.js';
import { type MandateDeps, verifyMandate } from '../auth/mandates.js';
import { seatingOf } from '../domain/roster.js';
import type { RoomState } from '../domain/state.js';
import { ProtocolError } from '../errors.js';
import type { Clock } from '../runtime/clock.js';
import { roomUrl } from '../runtime/sealing.js';

/**
 * How often a connection opened with a mandate re-verifies it: a revocation (an issuer's list, or a
 * hosted key revoked here) is not a room commit, so nothing would announce it. Ten seconds keeps the
 * cost at one verification per mandate connection per 10 s (a parked pool of 20,000 costs at most
 * 2,000 cheap verifications a second) while a revoked mandate stops listening soon after.
 */
export const MANDATE_RECHECK_MS = 10_000;

/** setTimeout's ceiling; a later expiry is re-armed by the next re-verification. */
const MAX_TIMER_MS = 2_147_483_647;

/** How a parked connection ends because of its credential. */
export interface SessionEnd {
  /**
   * The envelope the holder gets (a superseded token, an expired or revoked mandate), or null when the
   * credential itself still works and the connection only closes: the seat's invite was revoked, which
   * keeps the member's current token valid (docs/architecture.md), so reconnecting re-authenticates.
   */
  error: ProtocolError | null;
  /** A short machine-readable reason (the error code, or `invite_revoked`), for the stream's last comment. */
  reason: string;
}

export interface CredentialWatch {
  /** Re-checks the credential against a committed state: how the connection ends, or null to go on. */
  check(state: RoomState): SessionEnd | null;
  /**
   * Arms what the room's commits cannot announce (a mandate's expiry, its revocation); `end` is called
   * at most once. Returns the function that disarms it.
   */
  arm(end: (why: SessionEnd) => void): () => void;
}

/** What a watch needs of the service (operations' Services has all of it). */
export interface WatchServices {
  auth: AuthSettings;
  clock: Clock;
  /** Mandate verification (null when the service verifies none). */
  mandates: MandateDeps | null;
  baseUrl: string;
}

interface WatchContext extends WatchServices {
  slug: string;
  presented: PresentedCredentials;
}

/**
 * The watch of a connection opened with a token or a mandate; null for a password or anonymous reader,
 * which holds no credential that can be superseded or revoked.
 */
export function watchCredential(
  services: WatchServices,
  slug: string,
  opened: RoomState,
  presented: PresentedCredentials,
): CredentialWatch | null {
  if (!presented.bearer && !presented.mandate) return null;
  const context: WatchContext = {
    auth: services.auth,
    clock: services.clock,
    mandates: services.mandates,
    baseUrl: services.baseUrl,
    slug,
    presented,
  };
  let seat: string | null = null;
  try {
    seat = seatAt(context, opened);
  } catch (error) {
    // Superseded between the authorization and now: the first check ends the connection.
    if (!(error instanceof ProtocolError)) throw error;
  }
  // Invites already revoked when the connection opened did not stop it; only a revocation it witnesses does.
  const invites = seat === null ? [] : liveInvitesOf(opened, seat);
  const mandate = presented.verified ?? null;
  const expiresAt = mandate ? mandate.exp * 1000 : null;

  // The seat a credential resolves to depends only on the roster's seating, the room's auth mode and
  // its slug: a commit that changed none of them (most: a choice, whose vote stamp keeps the seating;
  // a message) is answered from the last check, without hashing the token again for every parked
  // connection on every commit. Rosters are never changed in place (domain/roster.ts, seatingOf).
  let last: { seating: object; auth: unknown; seat: string | null } | null = null;
  const currentSeat = (state: RoomState): string | null => {
    const seating = seatingOf(state.room.members);
    if (last && last.seating === seating && last.auth === state.room.config.auth) return last.seat;
    const current = seatAt(context, state);
    last = { seating, auth: state.room.config.auth, seat: current };
    return current;
  };

  return {
    check(state) {
      if (expiresAt !== null && context.clock.now() >= expiresAt) return ended(mandateExpired(mandate!.exp));
      let current: string | null;
      try {
        current = currentSeat(state);
      } catch (error) {
        if (error instanceof ProtocolError) return ended(error);
        throw error;
      }
      // A seat that is no longer this credential's ends the connection; an outsider who joins meanwhile keeps it.
      if (seat !== null && current !== seat) return { error: null, reason: 'seat_changed' };
      if (seat !== null && invites.some((code) => revoked(state, code)))
        return { error: null, reason: 'invite_revoked' };
      return null;
    },
    arm(end) {
      if (!mandate || !presented.mandate || !context.mandates) return () => {};
      let done = false;
      const finish = (why: SessionEnd) => {
        if (done) return;
        done = true;
        disarm();
        end(why);
      };
      const untilExpiry = Math.max(0, Math.min(expiresAt! - context.clock.now(), MAX_TIMER_MS));
      const expiry = setTimeout(() => finish(ended(mandateExpired(mandate.exp))), untilExpiry);
      const recheck = setInterval(() => {
        reverify(context, presented.mandate!).then(
          (why) => why && finish(why),
          () => {}, // an issuer that cannot be reached now is not a revocation; the next round retries
        );
      }, MANDATE_RECHECK_MS);
      expiry.unref();
      recheck.unref();
      const disarm = () => {
        clearTimeout(expiry);
        clearInterval(recheck);
      };
      return () => {
        done = true;
        disarm();
      };
    },
  };
}

function ended(error: ProtocolError): SessionEnd {
  return { error, reason: error.code };
}

/** The seat the credential holds in this state, or null; throws the caller's 401 when it is no longer valid. */
function seatAt(context: WatchContext, state: RoomState): string | null {
  const caller = resolveCaller(state, context.presented, context.auth, 'read');
  return caller.kind === 'member' ? caller.member.id : null;
}

function liveInvitesOf(state: RoomState, participantId: string): string[] {
  return state.room.invites
    .filter((invite) => invite.acceptedParticipantId === participantId && invite.revokedAt === null)
    .map((invite) => invite.code);
}

function revoked(state: RoomState, code: string): boolean {
  return state.room.invites.some((invite) => invite.code === code && invite.revokedAt !== null);
}

/** Refusals that will not heal; an unreachable issuer (`mandate.issuer_untrusted`, keys unavailable) may. */
const FINAL_MANDATE_CODES = new Set(['mandate.revoked', 'mandate.expired', 'mandate.signature_invalid']);

/** Verifies the mandate again as a read of this room: time, scope and revocation as of now. */
async function reverify(context: WatchContext, jws: string): Promise<SessionEnd | null> {
  try {
    await verifyMandate(
      jws,
      {
        now: context.clock.now(),
        roomSlug: context.slug,
        roomUrl: roomUrl(context.baseUrl, context.slug),
        action: null,
        mutating: false,
      },
      context.mandates!,
    );
    return null;
  } catch (error) {
    if (error instanceof ProtocolError && FINAL_MANDATE_CODES.has(error.code)) return ended(error);
    throw error;
  }
}
