/**
 * Which mandate seat a verified mandate reaches (docs/architecture.md, Credentials): a seat joined
 * with a mandate is bound to (room, issuer, sub). Any valid mandate of the same issuer naming the same
 * sub reaches it; a mandate of another issuer naming that sub reaches nothing of it, because anyone
 * can mint a self-issued mandate naming any sub (subs are public: receipts and `include=full`). Two
 * issuers naming one sub therefore hold two seats, so an issuer that names a sub first never locks out
 * the sub's own issuer (nor, for a `urn:` sub that no issuer owns, any other).
 */
import type { Member } from '../domain/types.js';
import type { VerifiedMandate } from './mandates.js';

/** What of a verified mandate decides which seat it reaches. */
export type MandateIdentity = Pick<VerifiedMandate, 'sub' | 'jti' | 'issuerKind' | 'issuerPrincipal'>;

/** The subject namespace of this service's hosted agents (`urn:svc:agent:<public_id>`). */
export const HOSTED_SUBJECT_PREFIX = 'urn:svc:agent:';

/** URN namespace identifiers compare case-insensitively, so `URN:SVC:AGENT:…` is in the namespace too. */
export function isHostedSubject(sub: string): boolean {
  return sub.slice(0, HOSTED_SUBJECT_PREFIX.length).toLowerCase() === HOSTED_SUBJECT_PREFIX;
}

/** Whether this mandate was signed by the issuer the seat is bound to. */
export function issuerOwnsSeat(member: Member, mandate: MandateIdentity): boolean {
  if (member.agentDid !== mandate.sub) return false;
  if (member.agentIss != null) return member.agentIss === mandate.issuerPrincipal;
  return provesLegacySeat(member, mandate);
}

/**
 * Seats joined before seats stored their issuer have only `agent_did` and the joining `mandate_id`.
 * The jti alone proves nothing (receipts and `include=full` publish it, and a did:key issuer can put
 * any jti in its own mandate), so such a seat is reached only by an issuer that no one else can be:
 * this service for its hosted-agent subjects, the subject's own did:key for a did:key subject, or an
 * HTTPS issuer presenting the joining jti (an HTTPS origin serves its own keys, so a forger must run
 * a public HTTPS host — with an issuer allowlist, one the operator trusts). Anything else is refused.
 */
function provesLegacySeat(member: Member, mandate: MandateIdentity): boolean {
  switch (mandate.issuerKind) {
    case 'self':
      return isHostedSubject(mandate.sub);
    case 'did:key':
      return mandate.issuerPrincipal === mandate.sub;
    case 'https':
      return mandate.jti === member.mandateId;
  }
}

export type MandateSeat = { kind: 'seat'; member: Member } | { kind: 'none' };

/**
 * The seat this mandate reaches in a room's roster: the seat bound to its (issuer, sub), else a seat
 * stored without an issuer that it proves (above). A seat of another issuer naming the same sub is
 * never reached: that issuer's claim on the sub is its own seat, and this mandate's issuer may join
 * beside it with a seat of its own (docs/architecture.md, Credentials).
 */
export function mandateSeat(members: readonly Member[], mandate: MandateIdentity): MandateSeat {
  const member =
    members.find((m) => m.agentIss != null && issuerOwnsSeat(m, mandate)) ??
    members.find((m) => m.agentIss == null && issuerOwnsSeat(m, mandate));
  return member ? { kind: 'seat', member } : { kind: 'none' };
}
