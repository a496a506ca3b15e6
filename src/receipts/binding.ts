/**
 * What a verified receipt is evidence of (docs/receipts.md, Verifying): the room it was signed for, and
 * the values it signs. An `/outcome` body also shows the same values unsigned (`resolved_winner`,
 * `question`, `closing_statement`, …) for readers who do not verify; a verifier reports the signed
 * values and refuses a body whose unsigned copy says something else. Pure and key-free: shared by the
 * client library, the command line and the room page.
 */
import { isRecord } from './chain.js';

/** The room a receipt was signed for and each claim that names it (docs/receipts.md, What a receipt is). */
export interface SignedRoom {
  room_id: unknown;
  iss: unknown;
  aud: unknown;
}

/** One ballot as a decision receipt signs it. */
export interface SignedBallot {
  agent_id: string;
  agent_iss: string | null;
  mandate_ref: string | null;
  /** The choice as signed: the option text, or the JCS text of a ranking or score map. */
  choice: string;
}

/** A decision exactly as its receipt signs it. */
export interface SignedDecision {
  decision_id: string | null;
  question: string | null;
  options: string[];
  mechanism: string | null;
  agreement: boolean;
  /** The receipt status: completed, rejected, tied or no_quorum. */
  status: string | null;
  winner: string | null;
  tallies: Record<string, number>;
  cast_votes: number | null;
  eligible_voters: number | null;
  /** When it sealed (the end of its cooldown), ISO 8601. */
  resolved_at: string | null;
  ballots: SignedBallot[];
}

/** A room's conclusion exactly as its receipt signs it. */
export interface SignedConclusion {
  statement: string | null;
  concluded_by: string | null;
  /** The signed `iat`: whole seconds, so an ISO instant at second precision. */
  concluded_at: string | null;
}

/** The caller trusts the room the outcome body names (its slug, on the service of its `jwks_url`). */
export const ROOM_FROM_BODY = 'from-body';

/**
 * The room URL an `/outcome` body names for itself: `<service>/r/<slug>`, the service being where its
 * `verification.jwks_url` points, which is how the service names its rooms in the receipts it signs.
 * Null when the body does not say.
 */
export function outcomeRoomUrl(body: unknown): string | null {
  if (!isRecord(body) || typeof body.slug !== 'string' || body.slug === '') return null;
  const verification = isRecord(body.verification) ? body.verification : {};
  const jwksUrl = typeof verification.jwks_url === 'string' ? verification.jwks_url : '';
  const suffix = '/.well-known/jwks.json';
  if (!jwksUrl.endsWith(suffix)) return null;
  return `${jwksUrl.slice(0, -suffix.length)}/r/${body.slug}`;
}

/** A room URL without the trailing slashes a reader may have typed. */
export function normalizeRoomUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The slug of a room URL (`…/r/<slug>`), or null when it is not one. */
export function roomUrlSlug(url: string): string | null {
  const match = /\/r\/([^/?#]+)$/.exec(normalizeRoomUrl(url));
  return match ? decodeURIComponent(match[1]!) : null;
}

export function signedRoom(payload: Record<string, unknown>): SignedRoom {
  const svc = isRecord(payload.svc) ? payload.svc : {};
  return { room_id: svc.room_id, iss: payload.iss, aud: payload.aud };
}

/**
 * Why a receipt does not belong to `room`: its `svc.room_id`, `iss` and `aud` must each name it. With
 * no room to compare against they must still agree with one another.
 */
export function roomErrors(payload: Record<string, unknown>, room: string | null): string[] {
  const signed = signedRoom(payload);
  const expected = room ?? (typeof signed.room_id === 'string' ? signed.room_id : null);
  const errors: string[] = [];
  for (const [claim, value] of [
    ['svc.room_id', signed.room_id],
    ['iss', signed.iss],
    ['aud', signed.aud],
  ] as const) {
    if (value === expected) continue;
    errors.push(
      room === null
        ? `the signed ${claim} ${show(value)} names another room than svc.room_id ${show(expected)}`
        : `the signed ${claim} ${show(value)} is not the room being verified, ${show(room)}`,
    );
  }
  return errors;
}

export function signedDecision(payload: Record<string, unknown>): SignedDecision {
  const svc = isRecord(payload.svc) ? payload.svc : {};
  const mechanism = isRecord(svc.mechanism) ? svc.mechanism : {};
  const parameters = isRecord(mechanism.parameters) ? mechanism.parameters : {};
  const outcome = isRecord(svc.outcome) ? svc.outcome : {};
  const diagnostics = isRecord(outcome.diagnostics) ? outcome.diagnostics : {};
  const windows = isRecord(svc.windows) ? svc.windows : {};
  const tallies = isRecord(outcome.tallies) ? outcome.tallies : {};
  return {
    decision_id: stringOrNull(svc.decision_id),
    question: stringOrNull(parameters.question),
    options: Array.isArray(parameters.options) ? parameters.options.filter((o) => typeof o === 'string') : [],
    mechanism: stringOrNull(mechanism.kind),
    agreement: parameters.agreement === true,
    status: stringOrNull(outcome.status),
    winner: stringOrNull(outcome.winning_option),
    tallies: Object.fromEntries(
      Object.entries(tallies).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
    ),
    cast_votes: typeof diagnostics.cast_votes === 'number' ? diagnostics.cast_votes : null,
    eligible_voters: typeof diagnostics.eligible_voters === 'number' ? diagnostics.eligible_voters : null,
    resolved_at: stringOrNull(windows.cooldown_ended_at),
    ballots: (Array.isArray(svc.votes) ? svc.votes : []).filter(isRecord).map((vote) => ({
      agent_id: String(vote.agent_id),
      agent_iss: stringOrNull(vote.agent_iss),
      mandate_ref: stringOrNull(vote.mandate_ref),
      choice: String(vote.choice),
    })),
  };
}

export function signedConclusion(payload: Record<string, unknown>): SignedConclusion {
  const svc = isRecord(payload.svc) ? payload.svc : {};
  return {
    statement: stringOrNull(svc.closing_statement),
    concluded_by: stringOrNull(svc.concluded_by),
    concluded_at: typeof payload.iat === 'number' ? isoSeconds(payload.iat * 1000) : null,
  };
}

/**
 * The engine's word for how a count ended (`resolved_outcome`) that each receipt status allows: the
 * receipt signs only the status, and a completed count may have passed outright or by plurality.
 */
const OUTCOMES_OF_STATUS: Record<string, readonly string[]> = {
  completed: ['pass', 'plurality_pass'],
  rejected: ['no_pass'],
  no_quorum: ['no_pass'],
  tied: ['tied'],
};

/**
 * Every unsigned field of a decision row (`decisions[i]` of the outcome body) that disagrees with its
 * signed twin. A field the row does not carry is not compared: only what the body shows can mislead.
 */
export function decisionRowErrors(row: Record<string, unknown>, payload: Record<string, unknown>): string[] {
  const svc = isRecord(payload.svc) ? payload.svc : {};
  const windows = isRecord(svc.windows) ? svc.windows : {};
  const signed = signedDecision(payload);
  const errors: string[] = [];
  if (svc.decision_kind === 'conclusion') errors.push('a decision row carries a conclusion receipt');
  const compare = (field: string, twin: string, signedValue: unknown) => {
    if (field in row && !sameValue(row[field], signedValue)) {
      errors.push(`${field} ${show(row[field])} differs from the signed ${twin} ${show(signedValue)}`);
    }
  };
  compare('id', 'decision_id', signed.decision_id);
  compare('question', 'question', signed.question);
  compare('options', 'options', signed.options);
  compare('outcome_status', 'status', signed.status);
  compare('resolved_winner', 'winner', signed.winner);
  compare('resolved_at', 'seal instant', signed.resolved_at);
  compare('opened_at', 'opening instant', windows.deliberation_started_at ?? null);
  if ('agreement' in row) compare('agreement', 'agreement flag', signed.agreement);
  if ('status' in row && row.status !== 'resolved') {
    errors.push(`status ${show(row.status)} is not "resolved", yet the row carries a signed receipt`);
  }
  if (
    'resolved_outcome' in row &&
    !(OUTCOMES_OF_STATUS[signed.status ?? ''] ?? []).includes(row.resolved_outcome as string)
  ) {
    errors.push(`resolved_outcome ${show(row.resolved_outcome)} does not fit the signed status ${show(signed.status)}`);
  }
  return errors;
}

/** Every unsigned field of the outcome's `conclusion` that disagrees with the signed conclusion. */
export function conclusionErrors(entry: Record<string, unknown>, payload: Record<string, unknown>): string[] {
  const svc = isRecord(payload.svc) ? payload.svc : {};
  const signed = signedConclusion(payload);
  const errors: string[] = [];
  if (svc.decision_kind !== 'conclusion') errors.push('the conclusion carries a decision receipt');
  if ('closing_statement' in entry && !sameValue(entry.closing_statement, signed.statement)) {
    errors.push(
      `closing_statement ${show(entry.closing_statement)} differs from the signed statement ${show(signed.statement)}`,
    );
  }
  if ('concluded_by' in entry && !sameValue(entry.concluded_by, signed.concluded_by)) {
    errors.push(`concluded_by ${show(entry.concluded_by)} differs from the signed ${show(signed.concluded_by)}`);
  }
  // The receipt signs the closing instant in whole seconds (`iat`); the body shows it to the millisecond.
  if ('concluded_at' in entry) {
    const shown = typeof entry.concluded_at === 'string' ? Date.parse(entry.concluded_at) : Number.NaN;
    if (Number.isNaN(shown) || isoSeconds(shown) !== signed.concluded_at) {
      errors.push(
        `concluded_at ${show(entry.concluded_at)} differs from the signed instant ${show(signed.concluded_at)}`,
      );
    }
  }
  return errors;
}

/**
 * The body's top-level summary of its latest decision (`question`, `resolved_winner`, …) against that
 * decision's signed receipt, and its `slug` against the room being verified. Each error names the field.
 */
export function summaryErrors(
  body: Record<string, unknown>,
  latest: { row: Record<string, unknown>; payload: Record<string, unknown> } | null,
  room: string | null,
): string[] {
  const errors: string[] = [];
  const slug = room === null ? null : roomUrlSlug(room);
  if (slug !== null && 'slug' in body && body.slug !== slug) {
    errors.push(`outcome.slug ${show(body.slug)} is not the slug of the room being verified, ${show(slug)}`);
  }
  if (body.conclusion != null && 'status' in body && body.status !== 'concluded') {
    errors.push(`outcome.status ${show(body.status)} is not "concluded", yet the room carries a signed conclusion`);
  }
  if (latest === null) {
    for (const field of ['question', 'resolved_winner', 'receipt_jws'] as const) {
      if (body[field] != null) errors.push(`outcome.${field} ${show(body[field])} is shown, but no decision is signed`);
    }
    return errors;
  }
  const signed = signedDecision(latest.payload);
  const compare = (field: string, twin: string, signedValue: unknown) => {
    if (field in body && !sameValue(body[field], signedValue)) {
      errors.push(
        `outcome.${field} ${show(body[field])} differs from the latest decision's signed ${twin} ${show(signedValue)}`,
      );
    }
  };
  compare('question', 'question', signed.question);
  compare('resolved_winner', 'winner', signed.winner);
  compare('resolved_at', 'seal instant', signed.resolved_at);
  compare('receipt_hash', 'receipt_hash', latest.row.receipt_hash);
  compare('prev_hash', 'prev_hash', isRecord(latest.payload.svc) ? latest.payload.svc.prev_hash : undefined);
  compare('receipt_jws', 'receipt', latest.row.receipt_jws);
  if (
    'resolved_outcome' in body &&
    !(OUTCOMES_OF_STATUS[signed.status ?? ''] ?? []).includes(body.resolved_outcome as string)
  ) {
    errors.push(
      `outcome.resolved_outcome ${show(body.resolved_outcome)} does not fit the latest decision's signed status ${show(signed.status)}`,
    );
  }
  return errors;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  return a === b;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
