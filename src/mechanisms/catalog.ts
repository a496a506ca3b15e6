/** Room mechanisms and how each maps onto an engine call (docs/mechanisms.md). */
import { invalidInput } from '../errors.js';
import type { CanonicalBallot, EngineFamily, MechanismName } from './types.js';

export const WIRED_MECHANISMS: readonly MechanismName[] = [
  'simple_majority',
  'supermajority',
  'plurality',
  'approval',
  'ranked_choice',
  'ranked_pairwise',
  'score_vote',
  'quadratic_vote',
];

/** Refused at configuration time and never advertised (docs/mechanisms.md). */
export const RESERVED_MECHANISMS: readonly string[] = ['budget_allocation', 'conviction_vote', 'bilateral_negotiation'];

export function isMechanismName(value: unknown): value is MechanismName {
  return typeof value === 'string' && (WIRED_MECHANISMS as readonly string[]).includes(value);
}

const FAMILY: Record<MechanismName, EngineFamily> = {
  simple_majority: 'generic',
  supermajority: 'generic',
  plurality: 'generic',
  approval: 'generic',
  ranked_choice: 'instant_runoff',
  ranked_pairwise: 'schulze',
  score_vote: 'score',
  quadratic_vote: 'quadratic',
};

export function engineFamily(mechanism: MechanismName): EngineFamily {
  return FAMILY[mechanism];
}

/** Mechanisms whose ballot is one option reference (agreement decisions are too, whatever the room). */
export function takesSingleChoice(mechanism: MechanismName): boolean {
  return mechanism === 'simple_majority' || mechanism === 'supermajority' || mechanism === 'plurality';
}

/** Agreement decisions exist only in majority-family rooms (docs/concepts.md, Decisions and slates). */
export function supportsAgreement(mechanism: MechanismName): boolean {
  return mechanism === 'simple_majority' || mechanism === 'supermajority';
}

/** Each mechanism's engine parameters (docs/mechanisms.md), besides `options` and `quorum`. */
const PRESETS: Record<MechanismName, Record<string, unknown>> = {
  simple_majority: {
    ballot_mode: 'single_choice',
    pass_threshold: 0.5,
    pass_threshold_comparison: 'strict',
    tie_break: 'no_pass',
    plurality_fallthrough: false,
  },
  supermajority: {
    ballot_mode: 'single_choice',
    pass_threshold: 2 / 3,
    pass_threshold_comparison: 'inclusive',
    tie_break: 'no_pass',
    plurality_fallthrough: false,
  },
  plurality: {
    ballot_mode: 'single_choice',
    pass_threshold: 0.5,
    pass_threshold_comparison: 'strict',
    tie_break: 'random_seeded',
    plurality_fallthrough: true,
  },
  approval: {
    ballot_mode: 'approval',
    pass_threshold: 0.5,
    pass_threshold_comparison: 'strict',
    tie_break: 'random_seeded',
    plurality_fallthrough: true,
  },
  ranked_choice: { tie_break: 'random_seeded' },
  ranked_pairwise: { tie_break: 'random_seeded' },
  score_vote: { min_score: 0, max_score: 5, tie_break: 'random_seeded' },
  quadratic_vote: { credits_per_voter: 9, tie_break: 'random_seeded' },
};

/** Unanimity: quorum 1 (every eligible voter), threshold 1, no comparison key (inclusive). */
const AGREEMENT_PRESET: Record<string, unknown> = {
  ballot_mode: 'single_choice',
  pass_threshold: 1,
  tie_break: 'no_pass',
  plurality_fallthrough: false,
};

/**
 * Exact engine parameters (docs/mechanisms.md), keys in insertion order: options, quorum, then the table's keys.
 * Not validated here: an empty slate is sealed without the engine but its receipt still names them.
 */
export function engineParameters(
  mechanism: MechanismName,
  settings: { options: string[]; quorumFraction: number; agreement: boolean },
): Record<string, unknown> {
  const options = [...settings.options];
  if (!settings.agreement) return { options, quorum: settings.quorumFraction, ...PRESETS[mechanism] };
  if (!supportsAgreement(mechanism)) {
    throw invalidInput(
      'agreement',
      `Agreement decisions are available only in simple_majority and supermajority rooms, not ${mechanism}.`,
      'agreement_not_supported',
    );
  }
  return { options, quorum: 1, ...AGREEMENT_PRESET };
}

const BALLOT_KEY: Record<EngineFamily, string> = {
  generic: 'choice',
  instant_runoff: 'ranking',
  schulze: 'ranking',
  score: 'scores',
  quadratic: 'allocation',
};

/** The engine vote for a canonical ballot; weight is omitted (1). */
export function engineVote(
  mechanism: MechanismName,
  voterId: string,
  ballot: CanonicalBallot,
): Record<string, unknown> {
  return { voter_id: voterId, [BALLOT_KEY[engineFamily(mechanism)]]: copyBallot(ballot) };
}

function copyBallot(ballot: CanonicalBallot): CanonicalBallot {
  if (typeof ballot === 'string') return ballot;
  return Array.isArray(ballot) ? [...ballot] : { ...ballot };
}
