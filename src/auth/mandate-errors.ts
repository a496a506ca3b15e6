/** The `mandate.*` rejections of mandate verification (docs/concepts.md, Mandates) with their `details`, one builder per check. */
import { type ProtocolError, protocolError } from '../errors.js';

export function mandateMalformed(problem: string, reason: string): ProtocolError {
  return protocolError(
    'mandate.malformed',
    `The mandate in X-Mandate cannot be used: ${problem}. A mandate is a compact JWS with header {alg: "EdDSA", typ: "svc-mandate+jwt", kid} and the claims iss, sub, jti, exp and svc {rooms, actions}.`,
    {
      hint: 'Ask the issuer for a correctly formed mandate (docs/concepts.md, Mandates).',
      details: { check: 'parse', reason },
    },
  );
}

export function issuerUntrusted(iss: string, reason: string, why: string): ProtocolError {
  return protocolError('mandate.issuer_untrusted', `The mandate's issuer ${iss} is not accepted here: ${why}.`, {
    hint:
      reason === 'keys_unavailable'
        ? "Retry later; the issuer's /.well-known/svc.json must be reachable and list its keys."
        : 'Use a mandate from an issuer this service trusts (see its operator).',
    details: { check: 'issuer', iss, reason },
  });
}

export function signatureInvalid(why: string): ProtocolError {
  return protocolError(
    'mandate.signature_invalid',
    `The mandate's signature does not verify: ${why}. The service verifies the bytes exactly as received, with the issuer key named by the header kid.`,
    { hint: 'Present the mandate exactly as the issuer signed it.', details: { check: 'signature' } },
  );
}

export function mandateExpired(exp: number): ProtocolError {
  return protocolError(
    'mandate.expired',
    `The mandate expired at ${new Date(exp * 1000).toISOString()} (exp ${exp}); a mandate is valid only while now < exp.`,
    { hint: 'Obtain a fresh mandate from its issuer.', details: { check: 'time', exp } },
  );
}

export function mandateNotYetValid(nbf: number): ProtocolError {
  return protocolError(
    'mandate.not_yet_valid',
    `The mandate is not valid before ${new Date(nbf * 1000).toISOString()} (nbf ${nbf}).`,
    { hint: 'Retry once the mandate has become valid.', details: { check: 'time', nbf } },
  );
}

export function roomNotInScope(slug: string): ProtocolError {
  return protocolError(
    'mandate.room_not_in_scope',
    `The mandate does not cover room ${slug}: its svc.rooms must list "*", "${slug}", the room URL or "urn:svc:room:${slug}".`,
    { hint: 'Use a mandate issued for this room.', details: { check: 'room' } },
  );
}

export function actionNotInScope(action: string): ProtocolError {
  const needs = action === 'member_join_request' ? 'member_join_request or an acting action' : `the action "${action}"`;
  return protocolError('mandate.action_not_in_scope', `The mandate's svc.actions do not include ${needs}.`, {
    hint: 'Use a mandate that grants this action.',
    details: { check: 'action', action },
  });
}

export function weightCapExceeded(weightCap: number, requested: number): ProtocolError {
  return protocolError(
    'mandate.weight_cap_exceeded',
    `This act carries weight ${requested}, above the mandate's weight_cap of ${weightCap}.`,
    {
      hint: 'Reduce the weight of the act to the cap.',
      details: { check: 'weight', weight_cap: weightCap, requested },
    },
  );
}

export function rateCapExceeded(limit: number, windowSeconds: number, retryAfterSeconds: number): ProtocolError {
  return protocolError(
    'mandate.rate_cap_exceeded',
    `The mandate allows ${limit} mutating calls per ${windowSeconds} s in this room, and that many were made; the next one is possible in ${retryAfterSeconds} s.`,
    {
      hint: `Wait ${retryAfterSeconds} s (Retry-After) before acting again.`,
      details: { check: 'rate', limit, window_seconds: windowSeconds, retry_after_seconds: retryAfterSeconds },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}

export function mandateRevoked(): ProtocolError {
  return protocolError('mandate.revoked', "The mandate's jti is on its issuer's revocation list.", {
    hint: 'Obtain a new mandate from its issuer.',
    details: { check: 'revocation' },
  });
}
