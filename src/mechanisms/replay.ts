/**
 * Semantic replay of a decoded decision-receipt payload (docs/receipts.md) and the agreement rules
 * (docs/receipts.md). A receipt that cannot be replayed is "unavailable", never "passed".
 */
import { ProtocolError } from '../errors.js';
import { engineVote, isMechanismName, supportsAgreement, takesSingleChoice } from './catalog.js';
import { runMechanism } from './engine.js';
import { isRecord } from './shared.js';
import { engineVoterIds, voterIdOf } from './voters.js';
import { type ReceiptOutcome, receiptOutcome } from './status.js';
import type { CanonicalBallot, EngineInput, MechanismName } from './types.js';

export interface ReplayReport {
  result: 'match' | 'mismatch' | 'unavailable';
  reason?: string;
  expected?: ReceiptOutcome;
}

export interface AgreementReport {
  result: 'valid' | 'invalid' | 'unavailable';
  reason?: string;
}

/** Ends a check early: the receipt contradicts itself (mismatch) or cannot be checked (unavailable). */
class ReplayStop extends Error {
  constructor(
    readonly result: 'mismatch' | 'unavailable',
    readonly reason: string,
  ) {
    super(reason);
  }
}

function ensure(condition: boolean, reason: string): void {
  if (!condition) throw new ReplayStop('mismatch', reason);
}

function unavailableWhen(condition: boolean, reason: string): void {
  if (condition) throw new ReplayStop('unavailable', reason);
}

function isCount(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

// ---------------------------------------------------------------------------------------------
// Reading the payload

interface DecisionReceipt {
  kind: MechanismName;
  parameters: Record<string, unknown>;
  votes: Record<string, unknown>[];
  abstentions: unknown[];
  seed: string;
  recorded: { status: unknown; winning_option: unknown; tallies: unknown };
  castVotes: number;
  eligibleVoters: number;
}

function readDecisionReceipt(payload: unknown): DecisionReceipt {
  const svc = isRecord(payload) ? payload.svc : undefined;
  ensure(isRecord(svc), 'the payload has no svc claim');
  const claims = svc as Record<string, unknown>;
  unavailableWhen(claims.decision_kind === 'conclusion', 'conclusion receipts record no decision to replay');
  const { mechanism, outcome } = claims;
  ensure(isRecord(mechanism), 'svc.mechanism is missing');
  const { kind, parameters } = mechanism as Record<string, unknown>;
  unavailableWhen(!isMechanismName(kind), `unknown mechanism kind ${JSON.stringify(kind)}`);
  ensure(isRecord(parameters), 'svc.mechanism.parameters is missing');
  ensure(isRecord(outcome) && isRecord(outcome.diagnostics), 'svc.outcome.diagnostics is missing');
  const { status, winning_option, tallies, diagnostics } = outcome as Record<string, unknown>;
  const { cast_votes, eligible_voters } = diagnostics as Record<string, unknown>;
  ensure(isCount(cast_votes) && isCount(eligible_voters), 'diagnostics must hold non-negative integer counts');
  ensure(Array.isArray(claims.votes), 'svc.votes is not a list');
  const abstentions = claims.abstentions ?? [];
  ensure(Array.isArray(abstentions), 'svc.abstentions is not a list');
  ensure(typeof claims.decision_id === 'string', 'svc.decision_id (the tie-break seed) is missing');
  return {
    kind: kind as MechanismName,
    parameters: parameters as Record<string, unknown>,
    votes: claims.votes as Record<string, unknown>[],
    abstentions: abstentions as unknown[],
    seed: claims.decision_id as string,
    recorded: { status, winning_option, tallies },
    castVotes: cast_votes as number,
    eligibleVoters: eligible_voters as number,
  };
}

/** A listed ballot's subject and issuer, checked. */
function signerOf(vote: unknown, position: number): { agentId: string; agentIss: string | null } {
  ensure(isRecord(vote), `vote ${position} is not an object`);
  const { agent_id, agent_iss } = vote as Record<string, unknown>;
  ensure(typeof agent_id === 'string', `vote ${position} has no agent_id`);
  ensure(agent_iss == null || typeof agent_iss === 'string', `vote ${position} has an agent_iss that is not a string`);
  return { agentId: agent_id as string, agentIss: (agent_iss as string | null | undefined) ?? null };
}

/**
 * Who each listed ballot counts for: its `agent_id`, paired with its `agent_iss` where ballots of two
 * issuers name one subject, since those are two seats (mechanisms/voters.ts).
 */
function votersOf(votes: readonly unknown[]): string[] {
  return engineVoterIds(votes.map(signerOf));
}

/** Single-choice ballots are the option text; arrays and maps travel as their JCS text. */
function decodeChoice(kind: MechanismName, vote: unknown, voter: string, position: number): Record<string, unknown> {
  const { choice } = vote as Record<string, unknown>;
  ensure(typeof choice === 'string', `vote ${position} has no choice text`);
  if (takesSingleChoice(kind)) return engineVote(kind, voter, choice as string);
  try {
    return engineVote(kind, voter, JSON.parse(choice as string) as CanonicalBallot);
  } catch {
    throw new ReplayStop('mismatch', `vote ${position} has a choice that is not JSON`);
  }
}

function engineParametersOf(parameters: Record<string, unknown>): Record<string, unknown> {
  const { question: _question, agreement: _agreement, ...engine } = parameters;
  return engine;
}

// ---------------------------------------------------------------------------------------------
// Replay (docs/receipts.md)

export function replayReceipt(payload: unknown): ReplayReport {
  try {
    return replay(readDecisionReceipt(payload));
  } catch (error) {
    if (error instanceof ReplayStop) return { result: error.result, reason: error.reason };
    throw error;
  }
}

const EMPTY_SLATE: ReceiptOutcome = { status: 'no_quorum', winning_option: null, tallies: {} };

function replay(receipt: DecisionReceipt): ReplayReport {
  if (receipt.parameters.agreement === true) checkAgreement(receipt);
  unavailableWhen(
    receipt.votes.length === 0 && receipt.castVotes > 0,
    'the receipt lists no ballots (aggregate-only receipt)',
  );
  const { options } = receipt.parameters;
  const expected = Array.isArray(options) && options.length === 0 ? EMPTY_SLATE : rerun(receipt);
  const differences = compare(expected, receipt.recorded);
  if (differences.length === 0) return { result: 'match', expected };
  return { result: 'mismatch', reason: differences.join('; '), expected };
}

/**
 * The count behind a decision receipt, re-run from the ballots it signs: instant-runoff rounds, the
 * Schulze matrix (what a reader's page shows); null when the receipt cannot be replayed (no ballots
 * listed, a conclusion, a malformed payload).
 */
export function replayTrace(payload: unknown): Record<string, unknown> | null {
  try {
    const receipt = readDecisionReceipt(payload);
    if (receipt.votes.length === 0 && receipt.castVotes > 0) return null;
    return runMechanism(receipt.kind, engineInputOf(receipt)).trace;
  } catch {
    return null;
  }
}

function engineInputOf(receipt: DecisionReceipt): EngineInput {
  const voters = votersOf(receipt.votes);
  return {
    parameters: engineParametersOf(receipt.parameters),
    eligible_voters: receipt.eligibleVoters,
    votes: receipt.votes.map((vote, i) => decodeChoice(receipt.kind, vote, voters[i]!, i)),
    participating_voters: receipt.votes.length + receipt.abstentions.length,
    deterministic_seed: receipt.seed,
  };
}

function rerun(receipt: DecisionReceipt): ReceiptOutcome {
  const input = engineInputOf(receipt);
  try {
    return receiptOutcome(runMechanism(receipt.kind, input), input.participating_voters ?? 0);
  } catch (error) {
    if (error instanceof ProtocolError) {
      throw new ReplayStop('mismatch', `the mechanism refuses the receipt's input: ${error.message}`);
    }
    throw error;
  }
}

function compare(expected: ReceiptOutcome, recorded: DecisionReceipt['recorded']): string[] {
  const differences: string[] = [];
  if (recorded.status !== expected.status) {
    differences.push(`status is ${JSON.stringify(recorded.status)}, replay gives ${JSON.stringify(expected.status)}`);
  }
  if (recorded.winning_option !== expected.winning_option) {
    differences.push(
      `winning_option is ${JSON.stringify(recorded.winning_option)}, replay gives ${JSON.stringify(expected.winning_option)}`,
    );
  }
  if (!sameTallies(expected.tallies, recorded.tallies)) {
    differences.push(
      `tallies are ${JSON.stringify(recorded.tallies)}, replay gives ${JSON.stringify(expected.tallies)}`,
    );
  }
  return differences;
}

function sameTallies(expected: Record<string, number>, recorded: unknown): boolean {
  if (!isRecord(recorded)) return false;
  const keys = Object.keys(expected);
  if (Object.keys(recorded).length !== keys.length) return false;
  return keys.every((key) => Object.hasOwn(recorded, key) && recorded[key] === expected[key]);
}

// ---------------------------------------------------------------------------------------------
// Agreement rules (docs/receipts.md)

export function verifyAgreementReceiptSemantics(payload: unknown): AgreementReport {
  try {
    const receipt = readDecisionReceipt(payload);
    if (receipt.parameters.agreement !== true) return { result: 'unavailable', reason: 'not an agreement decision' };
    checkAgreement(receipt);
    return { result: 'valid' };
  } catch (error) {
    if (error instanceof ReplayStop) {
      return { result: error.result === 'mismatch' ? 'invalid' : 'unavailable', reason: error.reason };
    }
    throw error;
  }
}

const AGREEMENT_PARAMETERS: Record<string, unknown> = {
  agreement: true,
  ballot_mode: 'single_choice',
  quorum: 1,
  pass_threshold: 1,
  tie_break: 'no_pass',
  plurality_fallthrough: false,
};
const AGREEMENT_KEYS = new Set(['question', 'options', ...Object.keys(AGREEMENT_PARAMETERS)]);

/** Throws a ReplayStop at the first rule the receipt breaks. */
function checkAgreement(receipt: DecisionReceipt): void {
  const options = checkAgreementParameters(receipt);
  checkAgreementCounts(receipt);
  const choices = checkAgreementVotes(receipt, options);
  checkAgreementTallies(receipt, options, choices);
  checkAgreementOutcome(receipt, choices);
}

function checkAgreementParameters({ kind, parameters }: DecisionReceipt): string[] {
  ensure(supportsAgreement(kind), `agreement decisions run only in majority-family rooms, not ${kind}`);
  for (const [key, value] of Object.entries(AGREEMENT_PARAMETERS)) {
    ensure(parameters[key] === value, `agreement parameter ${key} must be ${JSON.stringify(value)}`);
  }
  const unexpected = Object.keys(parameters).filter((key) => !AGREEMENT_KEYS.has(key));
  ensure(unexpected.length === 0, `agreement parameters carry unexpected keys: ${unexpected.join(', ')}`);
  const { options } = parameters;
  ensure(
    Array.isArray(options) &&
      options.every((option) => typeof option === 'string') &&
      new Set(options).size === options.length,
    'options must be a list of unique strings',
  );
  return options as string[];
}

function checkAgreementCounts({ votes, castVotes, eligibleVoters }: DecisionReceipt): void {
  ensure(castVotes <= eligibleVoters, 'cast_votes exceeds eligible_voters');
  unavailableWhen(votes.length === 0 && castVotes > 0, 'the receipt lists no ballots (aggregate-only receipt)');
  ensure(castVotes === votes.length, 'cast_votes differs from the number of listed votes');
}

function checkAgreementVotes({ votes }: DecisionReceipt, options: readonly string[]): string[] {
  const voters = new Set<string>();
  return votes.map((vote, i) => {
    ensure(isRecord(vote), `vote ${i} is not an object`);
    const { agent_id, choice, weight } = vote;
    ensure(typeof agent_id === 'string' && agent_id.length > 0, `vote ${i} has no agent_id`);
    // Unique per voter, (issuer, subject): one subject's seats of two issuers accept once each.
    const { agentId, agentIss } = signerOf(vote, i);
    const voter = voterIdOf(agentId, agentIss);
    ensure(!voters.has(voter), `voter ${voter} voted twice`);
    voters.add(voter);
    ensure(typeof choice === 'string' && options.includes(choice), `vote ${i} accepts an option not on the slate`);
    ensure(weight === undefined || weight === 1, `vote ${i} has a weight other than 1`);
    return choice as string;
  });
}

function checkAgreementTallies({ recorded }: DecisionReceipt, options: readonly string[], choices: string[]): void {
  const counts = Object.fromEntries(options.map((option) => [option, choices.filter((c) => c === option).length]));
  ensure(sameTallies(counts, recorded.tallies), 'tallies do not match the listed acceptances');
}

/** Full turnout on one option completes; full turnout split is rejected; anything less is no_quorum. */
function checkAgreementOutcome(receipt: DecisionReceipt, choices: string[]): void {
  const fullTurnout = receipt.castVotes === receipt.eligibleVoters && receipt.eligibleVoters > 0;
  const unanimous = fullTurnout && choices.every((choice) => choice === choices[0]);
  const status = unanimous ? 'completed' : fullTurnout ? 'rejected' : 'no_quorum';
  const winner = unanimous ? (choices[0] ?? null) : null;
  ensure(receipt.recorded.status === status, `an agreement with this turnout must record status ${status}`);
  ensure(receipt.recorded.winning_option === winner, `an agreement with these acceptances must name winner ${winner}`);
}
