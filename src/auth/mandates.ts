/**
 * Mandate verification (docs/concepts.md, Mandates), its eight steps in order: parse → issuer trust → signature → time →
 * room scope → action scope → weight cap, rate cap → revocation. The first failing check rejects
 * with its `mandate.*` code. Step 9 (the room's `config.auth`) is the caller's.
 */
import { createHash } from 'node:crypto';
import { JwsError, MANDATE_TYP, verifyCompactJws } from '../receipts/index.js';
import type { IssuerKind, IssuerTrust } from './issuers.js';
import { actionInScope, type MandateAction, parseMandate, type RateCaps, roomInScope } from './mandate-claims.js';
import {
  actionNotInScope,
  mandateExpired,
  mandateNotYetValid,
  mandateRevoked,
  rateCapExceeded,
  roomNotInScope,
  signatureInvalid,
  weightCapExceeded,
} from './mandate-errors.js';
import type { MandateRateCounter } from './rate-limit.js';

export { MANDATE_ACTIONS, type MandateAction } from './mandate-claims.js';

export interface MandateContext {
  /** Service clock, epoch ms. */
  now: number;
  /** The room the call targets; null for room creation (no room scope, no rate cap). */
  roomSlug: string | null;
  /** `{base}/r/{slug}`. */
  roomUrl: string | null;
  /** The action the call needs (docs/concepts.md, Mandates); null for reads, waits and webhook routes. A join passes `member_join_request`. */
  action: MandateAction | null;
  /** Weight of a weight-bearing act (a ballot: 1, or a quadratic ballot's total credits). */
  weight?: number;
  /**
   * Whether the call counts toward the mandate's rate cap (docs/concepts.md, Mandates). Defaults to `action !== null`;
   * pass true for webhook registration and deletion.
   */
  mutating?: boolean;
}

export interface MandateDeps {
  issuers: IssuerTrust;
  rateCaps: MandateRateCounter;
  /** The service's base URL, so its own mandates are recognised in either `iss` form. */
  baseUrl: () => string;
}

export interface VerifiedMandate {
  iss: string;
  sub: string;
  jti: string;
  exp: number;
  nbf?: number;
  iat?: number;
  rooms: string[];
  actions: MandateAction[];
  weightCap: number | null;
  rateCaps: RateCaps | null;
  trustStage: 0 | 1 | 2;
  issuerKind: IssuerKind;
  /** The issuer's origin (`https://host[:port]`, also for the service itself) or its DID: what `principal`-bound invites compare with. */
  issuerPrincipal: string;
  /** Rate-cap log key of (iss, sub, room); null without a room. Pass the whole result to recordMandateCall. */
  rateKey: string | null;
}

export async function verifyMandate(jws: string, ctx: MandateContext, deps: MandateDeps): Promise<VerifiedMandate> {
  // 1. Parse.
  const { kid, claims } = parseMandate(jws, deps.baseUrl());

  // 2. Issuer trust and key retrieval.
  const issuer = await deps.issuers.resolve(claims.issuer, claims.iss, ctx.now);

  // 3. Signature, over the bytes as received.
  const key = await issuer.key(kid, ctx.now);
  if (!key) throw signatureInvalid(`the issuer has no key with kid ${JSON.stringify(kid)}`);
  try {
    verifyCompactJws(jws, key, { typ: MANDATE_TYP });
  } catch (error) {
    if (!(error instanceof JwsError)) throw error;
    throw signatureInvalid(`it does not match the issuer key ${JSON.stringify(kid)}`);
  }

  // 4. Time, in unix seconds, no leeway.
  const nowSeconds = Math.floor(ctx.now / 1000);
  if (nowSeconds >= claims.exp) throw mandateExpired(claims.exp);
  if (claims.nbf !== undefined && nowSeconds < claims.nbf) throw mandateNotYetValid(claims.nbf);

  // 5. Room scope.
  if (ctx.roomSlug !== null && !roomInScope(claims.rooms, ctx.roomSlug, ctx.roomUrl)) {
    throw roomNotInScope(ctx.roomSlug);
  }

  // 6. Action scope.
  if (ctx.action !== null && !actionInScope(claims.actions, ctx.action)) throw actionNotInScope(ctx.action);

  // 7. Caps: weight, then rate.
  if (claims.weightCap !== undefined && ctx.weight !== undefined && ctx.weight > claims.weightCap) {
    throw weightCapExceeded(claims.weightCap, ctx.weight);
  }
  const rateKey = ctx.roomSlug === null ? null : mandateRateKey(issuer.principal, claims.sub, ctx.roomSlug);
  if (claims.rateCaps && rateKey !== null && (ctx.mutating ?? ctx.action !== null)) {
    const { limit, window_seconds } = claims.rateCaps;
    const decision = await deps.rateCaps.check(rateKey, limit, window_seconds, ctx.now);
    if (!decision.allowed) throw rateCapExceeded(limit, window_seconds, decision.retryAfterSeconds);
  }

  // 8. Revocation.
  if (await issuer.isRevoked(claims.jti, ctx.now)) throw mandateRevoked();

  return {
    iss: claims.iss,
    sub: claims.sub,
    jti: claims.jti,
    exp: claims.exp,
    ...(claims.nbf !== undefined ? { nbf: claims.nbf } : {}),
    ...(claims.iat !== undefined ? { iat: claims.iat } : {}),
    rooms: claims.rooms,
    actions: claims.actions,
    weightCap: claims.weightCap ?? null,
    rateCaps: claims.rateCaps ?? null,
    trustStage: claims.trustStage,
    issuerKind: issuer.kind,
    issuerPrincipal: issuer.principal,
    rateKey,
  };
}

/**
 * Counts a successful mutating call made under a mandate (docs/concepts.md, Mandates). Calls are logged whether or not
 * this mandate has caps: another mandate of the same (iss, sub) may, and counts them too.
 */
export async function recordMandateCall(
  counter: MandateRateCounter,
  mandate: VerifiedMandate,
  now: number,
): Promise<void> {
  if (mandate.rateKey === null) return;
  await counter.record(mandate.rateKey, now, mandate.rateCaps?.window_seconds ?? DEFAULT_RETAIN_SECONDS);
}

/** How long calls of cap-less mandates are kept for other mandates' windows. */
const DEFAULT_RETAIN_SECONDS = 3600;

/** Keyed by the issuer principal, so both `iss` forms of one HTTPS issuer share a log. */
export function mandateRateKey(issuerPrincipal: string, sub: string, roomSlug: string): string {
  return createHash('sha256')
    .update(JSON.stringify([issuerPrincipal, sub, roomSlug]))
    .digest('base64url');
}
