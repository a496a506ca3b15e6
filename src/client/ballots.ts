/**
 * Ballots typed by the room's mechanism (docs/mechanisms.md): a caller that says which mechanism the
 * room runs — `client.choose({ slug, mechanism: 'approval', choice: [1, 'beta'] })`, or
 * `client.choose<'approval'>(…)` — gets a compile error for a shape that mechanism refuses. Without
 * one, every shape the service takes is accepted, as before. The fields keep the descriptions of the
 * generated ChooseRequest, so an editor shows them on hover.
 */
import type * as W from './types/index.js';

/** An option on a ballot: its number (1, "1" or "#1") or its exact text. */
export type OptionRef = string | number;

/** What each mechanism's ballot is (docs/mechanisms.md): one option, a list of them, or points per option. */
export interface BallotByMechanism {
  simple_majority: OptionRef;
  supermajority: OptionRef;
  plurality: OptionRef;
  approval: OptionRef[];
  ranked_choice: OptionRef[];
  ranked_pairwise: OptionRef[];
  score_vote: Record<string, number>;
  quadratic_vote: Record<string, number>;
}

/** The mechanisms whose ballot may also be sent as `scores`, a list of `{option, points}`. */
export type PointsMechanism = 'score_vote' | 'quadratic_vote';

/** The properties of T, each required and of type V, keeping their declarations (and so their descriptions). */
export type Retyped<T, V> = { [K in keyof T]-?: V };

/** reason, rationale and decision, as ChooseRequest describes them. */
type BallotNotes = Omit<W.ChooseRequest, 'choice' | 'scores'>;

interface MechanismField<M extends W.Mechanism> {
  /**
   * The room's mechanism (its `config.mechanism`), so the ballot is checked against it at compile
   * time. Never sent: the service knows the room's mechanism.
   */
  mechanism?: M;
}

/**
 * `choose`'s fields with the ballot as `choice`, of mechanism M's shape. With M left to the compiler
 * and no `mechanism` given, it is every mechanism, so every shape the service takes compiles.
 */
export type ChooseFields<M extends W.Mechanism = W.Mechanism> = BallotNotes &
  Retyped<Pick<W.ChooseRequest, 'choice'>, BallotByMechanism[M]> &
  MechanismField<M>;

/** `choose`'s fields with a score or quadratic ballot as `scores`, a list of `{option, points}`. */
export type ChooseScoresFields<M extends PointsMechanism = PointsMechanism> = BallotNotes &
  Retyped<Pick<W.ChooseRequest, 'scores'>, W.ScoreEntry[]> &
  MechanismField<M>;
