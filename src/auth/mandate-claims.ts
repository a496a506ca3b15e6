/**
 * Step 1 of mandate verification (docs/concepts.md, Mandates): the compact JWS is parsed and its header and claims
 * are checked for shape, without any key. Also the action vocabulary and the room scope.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { type DecodedJws, decodeCompact, JwsError, MANDATE_TYP, publicKeyFromDidKey } from '../receipts/index.js';
import { mandateMalformed } from './mandate-errors.js';
import { isHostedSubject } from './seat-binding.js';

/** The actions that act in a room (docs/concepts.md, Mandates); any of them also admits a join. */
export const ACTING_ACTIONS = [
  'choose',
  'propose',
  'discuss',
  'ask',
  'start_choosing',
  'close',
  'react',
  'coalition_offer',
] as const;

/** The whole vocabulary, in the protocol's order. */
export const MANDATE_ACTIONS = [...ACTING_ACTIONS, 'revoke_own_action', 'member_join_request', 'member_leave'] as const;

export type MandateAction = (typeof MANDATE_ACTIONS)[number];

export function isMandateAction(value: unknown): value is MandateAction {
  return typeof value === 'string' && (MANDATE_ACTIONS as readonly string[]).includes(value);
}

export type IssuerForm =
  /** This service itself: `{base}` or `{base}/.well-known/svc.json`. */
  | { kind: 'self' }
  | { kind: 'did:key'; did: string; publicKey: KeyObject }
  /** `origin` is normalised (`https://host[:port]`); both forms of `iss` (an origin, or its discovery URL) map to it. */
  | { kind: 'url'; origin: string };

export interface RateCaps {
  limit: number;
  window_seconds: number;
}

export interface MandateClaims {
  iss: string;
  issuer: IssuerForm;
  sub: string;
  jti: string;
  exp: number;
  nbf?: number;
  iat?: number;
  rooms: string[];
  /** Only names of the vocabulary; others are ignored (docs/concepts.md, Mandates). */
  actions: MandateAction[];
  weightCap?: number;
  rateCaps?: RateCaps;
  trustStage: 0 | 1 | 2;
}

export interface ParsedMandate {
  kid: string;
  claims: MandateClaims;
}

/** `selfIssuer` is the service's base URL, so that its own mandates are recognised whatever its path. */
export function parseMandate(jws: string, selfIssuer: string | null = null): ParsedMandate {
  let decoded: DecodedJws;
  try {
    decoded = decodeCompact(jws);
  } catch (error) {
    if (error instanceof JwsError) throw mandateMalformed(error.message, 'jws');
    throw error;
  }
  const { header, payload } = decoded;
  if (header.alg !== 'EdDSA') throw mandateMalformed('the header alg must be "EdDSA"', 'alg');
  if (header.typ !== MANDATE_TYP) throw mandateMalformed(`the header typ must be "${MANDATE_TYP}"`, 'typ');
  if (typeof header.kid !== 'string' || header.kid === '') {
    throw mandateMalformed('the header must carry a non-empty kid naming the issuer key', 'kid');
  }
  return { kid: header.kid, claims: readClaims(payload, selfIssuer) };
}

function readClaims(payload: Record<string, unknown>, selfIssuer: string | null): MandateClaims {
  const iss = payload.iss;
  if (typeof iss !== 'string') throw claimError('iss', 'a string');
  const isSelf = selfIssuer !== null && (iss === selfIssuer || iss === `${selfIssuer}${DISCOVERY_PATH}`);
  const issuer: IssuerForm = isSelf ? { kind: 'self' } : issuerForm(iss);
  const sub = boundedString(payload.sub, 'sub', 512);
  // Hosted-agent subjects are this service's namespace: only its own mandates may name them, or
  // anyone could sign a did:key mandate for a hosted agent's seat (docs/architecture.md, Credentials).
  if (isHostedSubject(sub) && !isSelf) {
    throw mandateMalformed(
      `its sub ${JSON.stringify(sub)} is in this service's hosted-agent namespace (urn:svc:agent:…), which only mandates this service issued may name, and its iss is another issuer`,
      'foreign_hosted_subject',
    );
  }
  // Receipts name a token-cast ballot `participant:<id>`; a mandate subject of that form would read
  // as that token seat's ballot to anyone attributing by agent_id (docs/architecture.md, Credentials).
  if (sub.slice(0, TOKEN_BALLOT_PREFIX.length).toLowerCase() === TOKEN_BALLOT_PREFIX) {
    throw mandateMalformed(
      `its sub ${JSON.stringify(sub)} has the form receipts give ballots cast with a participant token (participant:<id>), which no mandate subject may take; use the agent's own identifier (a did:key, a URL or a urn:)`,
      'reserved_subject',
    );
  }
  if (selfIssuer !== null) checkAudience(payload.aud, selfIssuer);
  const jti = boundedString(payload.jti, 'jti', 256);
  const exp = integer(payload.exp, 'exp');
  const nbf = payload.nbf === undefined ? undefined : integer(payload.nbf, 'nbf');
  const iat = payload.iat === undefined ? undefined : integer(payload.iat, 'iat');

  const svc = payload.svc;
  if (svc === null || typeof svc !== 'object' || Array.isArray(svc)) throw claimError('svc', 'an object');
  const claims = svc as Record<string, unknown>;
  const rooms = nonEmptyStrings(claims.rooms, 'svc.rooms');
  const actions = [...new Set(nonEmptyStrings(claims.actions, 'svc.actions').filter(isMandateAction))];
  const weightCap = claims.weight_cap === undefined ? undefined : positive(claims.weight_cap, 'svc.weight_cap');
  const rateCaps = claims.rate_caps === undefined ? undefined : readRateCaps(claims.rate_caps);
  const stage = claims.trust_stage ?? 0;
  if (stage !== 0 && stage !== 1 && stage !== 2) {
    throw mandateMalformed('svc.trust_stage must be 0, 1 or 2', 'trust_stage');
  }
  return {
    iss,
    issuer,
    sub,
    jti,
    exp,
    ...(nbf !== undefined ? { nbf } : {}),
    ...(iat !== undefined ? { iat } : {}),
    rooms,
    actions,
    ...(weightCap !== undefined ? { weightCap } : {}),
    ...(rateCaps !== undefined ? { rateCaps } : {}),
    trustStage: stage,
  };
}

const DISCOVERY_PATH = '/.well-known/svc.json';

/** The `agent_id` prefix of token-cast ballots in receipts: never a mandate subject. */
const TOKEN_BALLOT_PREFIX = 'participant:';

/**
 * `aud` is optional (clients in the wild send none); when present, a string or an array of strings,
 * it must name this service by its public base URL (= its `issuer_id`), with or without a trailing
 * slash. A mandate addressed to another service is not replayable here.
 */
function checkAudience(aud: unknown, selfIssuer: string): void {
  if (aud === undefined) return;
  const names = typeof aud === 'string' ? [aud] : aud;
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
    throw claimError('aud', 'a string or an array of strings');
  }
  const self = selfIssuer.replace(/\/+$/, '');
  if (names.some((n) => n.replace(/\/+$/, '') === self)) return;
  throw mandateMalformed(
    `it is addressed to another service: its aud does not name this service (${self}); drop aud or set it to ${self}`,
    'audience',
  );
}

/**
 * `iss` is a `did:key`, an origin or that origin's discovery URL. Plain `http` is accepted here and
 * refused at the trust step unless private issuers are allowed (local test issuers).
 */
function issuerForm(iss: string): IssuerForm {
  if (iss.startsWith('did:')) {
    try {
      const x = Buffer.from(publicKeyFromDidKey(iss)).toString('base64url');
      return {
        kind: 'did:key',
        did: iss,
        publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }),
      };
    } catch (error) {
      throw mandateMalformed(`iss is not an Ed25519 did:key (${(error as Error).message})`, 'claims');
    }
  }
  let url: URL;
  try {
    url = new URL(iss);
  } catch {
    throw claimError('iss', 'an HTTPS origin, its discovery URL, or a did:key');
  }
  const plainOrigin = url.pathname === '/' || url.pathname === DISCOVERY_PATH;
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    !plainOrigin ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== '' ||
    iss.includes('?') ||
    iss.includes('#')
  ) {
    throw claimError('iss', 'an HTTPS origin, its discovery URL, or a did:key');
  }
  return { kind: 'url', origin: url.origin };
}

function readRateCaps(value: unknown): RateCaps {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw claimError('svc.rate_caps', 'an object {limit, window_seconds}');
  }
  const caps = value as Record<string, unknown>;
  return {
    limit: positive(caps.limit, 'svc.rate_caps.limit'),
    window_seconds: positive(caps.window_seconds, 'svc.rate_caps.window_seconds'),
  };
}

function boundedString(value: unknown, name: string, max: number): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > max) {
    throw claimError(name, `a string of 1..${max} characters`);
  }
  return value;
}

function integer(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw claimError(name, 'an integer (unix seconds)');
  return value;
}

function positive(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw claimError(name, 'an integer of at least 1');
  }
  return value;
}

function nonEmptyStrings(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    throw claimError(name, 'a non-empty array of non-empty strings');
  }
  return value as string[];
}

function claimError(name: string, expected: string) {
  return mandateMalformed(`the claim ${name} is missing or is not ${expected}`, 'claims');
}

/** docs/concepts.md, Mandates: `*`, the slug, `{base}/r/{slug}` (with or without trailing slash), or `urn:svc:room:{slug}`. */
export function roomInScope(rooms: readonly string[], slug: string, roomUrl: string | null): boolean {
  const url = roomUrl?.replace(/\/+$/, '') ?? null;
  return rooms.some(
    (entry) =>
      entry === '*' ||
      entry === slug ||
      entry === `urn:svc:room:${slug}` ||
      (url !== null && (entry === url || entry === `${url}/`)),
  );
}

/** docs/concepts.md, Mandates: a join needs `member_join_request` or any acting action; every other call its own action. */
export function actionInScope(actions: readonly MandateAction[], action: MandateAction): boolean {
  if (action === 'member_join_request') {
    return (
      actions.includes('member_join_request') ||
      actions.some((a) => (ACTING_ACTIONS as readonly MandateAction[]).includes(a))
    );
  }
  return actions.includes(action);
}
