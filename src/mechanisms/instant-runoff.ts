/** Ranked choice by instant runoff (docs/mechanisms.md). */
import { jsKeyOrder, leaders, rankByScore, scoreOf, toRecord } from './ordering.js';
import {
  type CleanBallot,
  type CommonParameters,
  cleanVotes,
  isQuorumMet,
  readCommonParameters,
  readEligibleVoters,
  readParticipatingVoters,
  readRankedBallot,
  readSeed,
  reasonField,
  traceParameters,
} from './shared.js';
import { bottomTieCanonical, exhaustedCanonical, pickFrom, seededDraw } from './tie-break.js';
import { type EngineInput, type EngineOutput, NO_QUORUM, type Verdict } from './types.js';

export interface RunoffRound {
  tally: Record<string, number>;
  remaining: string[];
  eliminated: string[];
  exhausted_ballots: number;
}

interface RoundCount {
  scores: Map<string, number>;
  exhausted: number;
  active: number;
}

interface RunoffResult {
  verdict: Verdict;
  rounds: RunoffRound[];
  finalTally: Record<string, number>;
}

/** Each ballot counts for its highest-ranked option still remaining; a ballot with none left is exhausted. */
function countRound(ballots: readonly CleanBallot<string[]>[], remaining: readonly string[]): RoundCount {
  const scores = new Map(remaining.map((option) => [option, 0]));
  let exhausted = 0;
  for (const { weight, ballot } of ballots) {
    const preferred = ballot.find((option) => scores.has(option));
    if (preferred === undefined) exhausted += 1;
    else scores.set(preferred, scoreOf(scores, preferred) + weight);
  }
  const active = jsKeyOrder(remaining).reduce((sum, option) => sum + scoreOf(scores, option), 0);
  return { scores, exhausted, active };
}

/** Every ballot exhausted (docs/mechanisms.md, ranked_choice): nobody's ballot reaches a remaining option. */
function resolveExhausted(remaining: readonly string[], params: CommonParameters, seed: string): Verdict {
  const rule = params.tieBreak;
  const pick = (winner: string | undefined): Verdict =>
    winner === undefined
      ? { outcome: 'tied', winner: null, reason: 'all ballots exhausted; no_pass tie-break or no remaining options' }
      : { outcome: 'pass', winner, reason: `all ballots exhausted; ${rule} resolved to ${winner}` };
  if (rule === 'first_listed') return pick(remaining[0]);
  if (rule === 'random_seeded') {
    const ordered = jsKeyOrder(remaining);
    return pick(pickFrom(ordered, seededDraw(seed, exhaustedCanonical(ordered), ordered.length).index));
  }
  return pick(undefined);
}

type BottomStep = { eliminate: string } | { stop: Verdict };

/** Elimination (docs/mechanisms.md, ranked_choice): which option leaves this round, or why the run stops at a bottom tie. */
function bottomStep(
  ranked: readonly string[],
  scores: ReadonlyMap<string, number>,
  remaining: readonly string[],
  round: number,
  params: CommonParameters,
  seed: string,
): BottomStep {
  const bottom = scoreOf(scores, pickFrom(ranked, ranked.length - 1));
  const tied = ranked.filter((option) => scoreOf(scores, option) === bottom);
  const [only] = tied;
  if (tied.length === 1 && only !== undefined) return { eliminate: only };
  switch (params.tieBreak) {
    case 'no_pass':
      return {
        stop: {
          outcome: 'tied',
          winner: null,
          reason: `no_pass tie-break: ${tied.length}-way bottom tie at round ${round + 1}`,
        },
      };
    case 'first_listed': {
      const inSlateOrder = remaining.filter((option) => tied.includes(option));
      return { eliminate: pickFrom(inSlateOrder, inSlateOrder.length - 1) };
    }
    case 'random_seeded': {
      const draw = seededDraw(seed, bottomTieCanonical(round, remaining, tied), tied.length);
      return { eliminate: pickFrom(tied, draw.index) };
    }
  }
}

/**
 * Every round either finishes or eliminates exactly one option, and a round with a single option
 * left always finishes, so the run ends within `options.length` rounds. (The spec's bottom-tie
 * reason for a run that "eliminated all remaining" therefore never arises here.)
 */
function runRounds(ballots: readonly CleanBallot<string[]>[], params: CommonParameters, seed: string): RunoffResult {
  const rounds: RunoffRound[] = [];
  let remaining = [...params.options];
  for (let round = 0; ; round += 1) {
    const { scores, exhausted, active } = countRound(ballots, remaining);
    const tally = toRecord(remaining, (option) => scoreOf(scores, option));
    const record = (eliminated: string[]) =>
      rounds.push({ tally, remaining: [...remaining], eliminated, exhausted_ballots: exhausted });
    const finish = (verdict: Verdict): RunoffResult => {
      record([]);
      return { verdict, rounds, finalTally: { ...tally } };
    };
    if (active === 0) return finish(resolveExhausted(remaining, params, seed));
    const ranked = rankByScore(remaining, scores);
    const { top, ties } = leaders(ranked, scores);
    const [leader] = ties;
    if (ties.length === 1 && leader !== undefined && top > active / 2) {
      return finish({ outcome: 'pass', winner: leader });
    }
    const [sole] = remaining;
    if (remaining.length === 1 && sole !== undefined) return finish({ outcome: 'pass', winner: sole });
    const step = bottomStep(ranked, scores, remaining, round, params, seed);
    if ('stop' in step) return finish(step.stop);
    record([step.eliminate]);
    remaining = remaining.filter((option) => option !== step.eliminate);
  }
}

export function runInstantRunoff(input: EngineInput): EngineOutput {
  const params = readCommonParameters(input.parameters);
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const optionSet = new Set(params.options);
  const cleaned = cleanVotes(input.votes, (vote) => readRankedBallot(vote, optionSet));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const result: RunoffResult = quorumMet
    ? runRounds(cleaned.ballots, params, seed)
    : { verdict: NO_QUORUM, rounds: [], finalTally: toRecord(params.options, () => 0) };
  return {
    outcome: result.verdict.outcome,
    winner: result.verdict.winner,
    per_option_score: result.finalTally,
    cast_votes: castVotes,
    eligible_voters: eligibleVoters,
    quorum_met: quorumMet,
    trace: {
      parameters: traceParameters(params.raw),
      rounds: result.rounds,
      invalid_votes: cleaned.invalidVotes,
      duplicate_voter_ids: cleaned.duplicateVoterIds,
      ...reasonField(result.verdict),
    },
  };
}
