/**
 * Counting a decision: the engine input the service builds (docs/mechanisms.md), the early-close
 * determination (docs/how-decisions-end.md, With early close) and the seal record (docs/how-decisions-end.md). Pure: the decision machine calls
 * these with the facts the room hands it.
 */
import {
  type EngineInput,
  type EngineOutput,
  engineFamily,
  engineParameters,
  engineVote,
  isLocked,
  receiptStatus,
  runMechanism,
  compareVoters,
  takesSingleChoice,
  engineVoterIds,
} from '../mechanisms/index.js';
import { singleChoiceLeadBound } from './lead-bound.js';
import type { AbstentionRecord, BallotRecord, DecisionData, DecisionFacts, SealRecord } from './types.js';

export interface Count {
  input: EngineInput;
  output: EngineOutput;
  votes: BallotRecord[];
  abstentions: AbstentionRecord[];
  responses: number;
  eligibleVoters: number;
}

/** Ballots of eligible members in engine order: cast_at ascending, ties by agent id, then issuer. */
export function countedBallots(decision: DecisionData, electorate: string[] | ReadonlySet<string>): BallotRecord[] {
  return inOrder(eligibleOnly(decision.ballots, electorate), (b) => b.castAt);
}

export function countedAbstentions(
  decision: DecisionData,
  electorate: string[] | ReadonlySet<string>,
): AbstentionRecord[] {
  return inOrder(eligibleOnly(decision.abstentions, electorate), (a) => a.declaredAt);
}

function eligibleOnly<T extends { participantId: string }>(
  items: readonly T[],
  electorate: string[] | ReadonlySet<string>,
): T[] {
  const eligible = electorate instanceof Set ? electorate : new Set(electorate);
  return items.filter((item) => eligible.has(item.participantId));
}

/** Sorted by time, ties by agent id, then issuer. Ballots are usually stored in that order already: then no sort. */
function inOrder<T extends { agentId: string; agentIss?: string }>(items: T[], at: (item: T) => number): T[] {
  const before = (a: T, b: T) => at(a) - at(b) || compareVoters(a, b);
  for (let i = 1; i < items.length; i++) if (before(items[i - 1]!, items[i]!) > 0) return items.sort(before);
  return items;
}

export function eligibleVoters(facts: DecisionFacts): number {
  return Math.max(facts.electorate.length, facts.quorum ?? 0);
}

/** Runs the mechanism on the current ballots; null when the slate is empty (the engine is never called then). */
export function count(decision: DecisionData, facts: DecisionFacts): Count | null {
  if (decision.options.length === 0) return null;
  const electorate = new Set(facts.electorate);
  const votes = countedBallots(decision, electorate);
  const abstentions = countedAbstentions(decision, electorate);
  const voters = eligibleVoters(facts);
  const voterIds = engineVoterIds(votes);
  const quorumFraction = facts.quorum === null || voters === 0 ? 0 : facts.quorum / voters;
  const input: EngineInput = {
    parameters: engineParameters(facts.mechanism, {
      options: decision.options,
      quorumFraction,
      agreement: decision.agreement,
    }),
    eligible_voters: voters,
    // One voter per (issuer, subject): two issuers naming one subject are two voters (mechanisms/voters.ts).
    votes: votes.map((v, i) => engineVote(facts.mechanism, voterIds[i]!, v.ballot)),
    participating_voters: votes.length + abstentions.length,
    deterministic_seed: decision.id,
  };
  const output = runMechanism(facts.mechanism, input);
  return { input, output, votes, abstentions, responses: votes.length + abstentions.length, eligibleVoters: voters };
}

export interface Determination {
  determined: boolean;
  winner: string | null;
}

/**
 * The last determination per decision context. The machine's guards ask several times while
 * handling one event (same context object, same facts object); contexts are immutable, so the
 * answer is reused instead of recounting every ballot each time.
 */
const determinations = new WeakMap<DecisionData, { facts: DecisionFacts; result: Determination }>();

/** docs/how-decisions-end.md, With early close: at least one response, the roster gate, and the mechanism's lock proof. */
export function determine(decision: DecisionData, facts: DecisionFacts): Determination {
  const cached = determinations.get(decision);
  if (cached?.facts === facts) return cached.result;
  const result = determineAfresh(decision, facts);
  determinations.set(decision, { facts, result });
  return result;
}

function determineAfresh(decision: DecisionData, facts: DecisionFacts): Determination {
  if (!facts.earlyClose || lockImpossible(decision, facts)) return { determined: false, winner: null };
  const counted = count(decision, facts);
  if (counted === null || counted.responses < 1) return { determined: false, winner: null };
  if (facts.rosterGate && decision.eligibleIds === null) return { determined: false, winner: null };
  const locked = isLocked(facts.mechanism, decision.agreement, counted.input, counted.output);
  return { determined: locked, winner: counted.output.winner };
}

/** The sealed artifact (docs/how-decisions-end.md); the receipt is built from it by the runtime. */
export function sealRecord(
  decision: DecisionData,
  facts: DecisionFacts,
  at: number,
  votingEndedAt: number,
): SealRecord {
  const counted = count(decision, facts);
  if (counted === null) {
    return {
      at,
      votingEndedAt,
      mechanism: facts.mechanism,
      parameters: engineParameters(facts.mechanism, {
        options: [],
        quorumFraction: 0,
        agreement: decision.agreement,
      }),
      output: null,
      status: 'no_quorum',
      outcome: 'no_pass',
      winner: null,
      tallies: {},
      castVotes: 0,
      eligibleVoters: eligibleVoters(facts),
      votes: [],
      abstentions: countedAbstentions(decision, facts.electorate),
    };
  }
  const { output } = counted;
  const status = receiptStatus(output, counted.responses);
  const forcedNoQuorum = counted.responses === 0;
  return {
    at,
    votingEndedAt,
    mechanism: facts.mechanism,
    parameters: counted.input.parameters,
    output,
    status,
    outcome: forcedNoQuorum ? 'no_pass' : output.outcome,
    winner: forcedNoQuorum ? null : output.winner,
    tallies: output.per_option_score,
    castVotes: output.cast_votes,
    eligibleVoters: output.eligible_voters,
    votes: counted.votes,
    abstentions: counted.abstentions,
  };
}

/**
 * A lock proof's necessary condition, checked before counting every ballot (a hot room asks on
 * each choice). Ranked mechanisms and agreement decisions lock only once every eligible voter has
 * answered; a single-choice count locks only when its leader leads every rival, and the empty
 * score, by more than the ballots still outstanding (lock.ts). The raw ballot and abstention lists
 * bound the counted ones from above and the electorate bounds the eligible voters from below, so
 * when this says impossible the full count would not have locked either.
 */
function lockImpossible(decision: DecisionData, facts: DecisionFacts): boolean {
  const outstanding = facts.electorate.length - decision.ballots.length - decision.abstentions.length;
  if (outstanding <= 0) return false;
  const family = engineFamily(facts.mechanism);
  if (decision.agreement || family === 'instant_runoff' || family === 'schulze') return true;
  if (family !== 'generic' || !takesSingleChoice(facts.mechanism)) return false;
  return (
    decision.ballots.length <= outstanding ||
    singleChoiceLeadBound(decision.ballots, decision.options, facts.electorate) <= outstanding
  );
}

/** Next instant at which time alone changes this decision, or null. */
export function nextDeadline(decision: DecisionData, phase: string): number | null {
  if (phase === 'proposing') {
    if (decision.votingOpensAt !== null && decision.options.length > 0) {
      return Math.min(decision.votingOpensAt, decision.votingEndsAt);
    }
    return decision.votingEndsAt;
  }
  if (phase === 'settling' && decision.settling) return Math.min(decision.settling.endsAt, decision.votingEndsAt);
  if (phase === 'voting') return decision.votingEndsAt;
  return null;
}
