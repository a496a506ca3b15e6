/** Shapes shared by every mechanism engine (docs/mechanisms.md). */

export type MechanismName =
  | 'simple_majority'
  | 'supermajority'
  | 'plurality'
  | 'approval'
  | 'ranked_choice'
  | 'ranked_pairwise'
  | 'score_vote'
  | 'quadratic_vote';

export type EngineFamily = 'generic' | 'instant_runoff' | 'schulze' | 'score' | 'quadratic';

export type Outcome = 'pass' | 'no_pass' | 'tied' | 'plurality_pass';

export type TieBreak = 'no_pass' | 'first_listed' | 'random_seeded';

/** A ballot as the service stores it: an option text, an array of option texts, or a map keyed by option text. */
export type CanonicalBallot = string | string[] | Record<string, number>;

export interface EngineInput {
  parameters: Record<string, unknown>;
  eligible_voters: number;
  votes: Record<string, unknown>[];
  participating_voters?: number;
  deterministic_seed: string;
}

export interface EngineOutput {
  outcome: Outcome;
  winner: string | null;
  per_option_score: Record<string, number>;
  cast_votes: number;
  eligible_voters: number;
  quorum_met: boolean;
  threshold_met?: boolean;
  trace: Record<string, unknown>;
}

/** What a tie rule or a count decided: the outcome, its winner and, when a tie rule acted, why. */
export interface Verdict {
  outcome: Outcome;
  winner: string | null;
  reason?: string;
}

export const NO_QUORUM: Verdict = { outcome: 'no_pass', winner: null };
