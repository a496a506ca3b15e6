/**
 * An upper bound of a single-choice count's lead (determination.ts asks for it on every choice in
 * a hot room). A ballot the count surely keeps (an eligible voter's only ballot, naming an option
 * on the slate) adds exactly 1 to its option; any other ballot may add 1 to some option or
 * nothing. So every option's counted score lies in [sure, sure + unsure], and no option can lead
 * the runner-up of the sure tallies (or, with one option, the empty score) by more than the sure
 * lead plus the unsure ballots: any other leader would first spend unsure ballots overtaking.
 *
 * The tallies are a function of the ballot multiset, so each decision's are kept between calls and
 * brought up to date from what differs between the ballot list seen last and the one given now
 * (one ballot inserted, as a rule): the bound costs a pointer scan, not a recount.
 */
import { voterIdOf } from '../mechanisms/index.js';
import type { BallotRecord } from './types.js';

class SureTally {
  private seen: readonly BallotRecord[] = [];
  private readonly eligible: ReadonlySet<string>;
  /** Ballots by voter (issuer and subject, mechanisms/voters.ts), as the count finds repeats. */
  private readonly byVoter = new Map<string, BallotRecord[]>();
  private readonly sure = new Map<string, number>();
  private unsure = 0;

  constructor(
    private electorate: readonly string[],
    private readonly options: readonly string[],
  ) {
    this.eligible = new Set(electorate);
  }

  /** The room hands out a new electorate array on every roster write (a vote stamps its voter); same ids, same tally. */
  counts(electorate: readonly string[]): boolean {
    if (electorate === this.electorate) return true;
    if (electorate.length !== this.electorate.length || electorate.some((id, i) => id !== this.electorate[i]))
      return false;
    this.electorate = electorate;
    return true;
  }

  leadOver(ballots: readonly BallotRecord[]): number {
    this.update(ballots);
    let first = 0;
    let second = 0;
    for (const votes of this.sure.values()) {
      if (votes > first) [first, second] = [votes, first];
      else if (votes > second) second = votes;
    }
    return first - (this.options.length > 1 ? second : 0) + this.unsure;
  }

  private update(ballots: readonly BallotRecord[]): void {
    const old = this.seen;
    const shorter = Math.min(old.length, ballots.length);
    let head = 0;
    while (head < shorter && old[head] === ballots[head]) head++;
    let tail = 0;
    while (tail < shorter - head && old[old.length - 1 - tail] === ballots[ballots.length - 1 - tail]) tail++;
    for (let i = head; i < old.length - tail; i++) this.remove(old[i]!);
    for (let i = head; i < ballots.length - tail; i++) this.add(ballots[i]!);
    this.seen = ballots;
  }

  private add(ballot: BallotRecord): void {
    const voter = voterIdOf(ballot.agentId, ballot.agentIss);
    const ofVoter = this.byVoter.get(voter) ?? [];
    this.count(ofVoter, -1);
    ofVoter.push(ballot);
    this.byVoter.set(voter, ofVoter);
    this.count(ofVoter, 1);
  }

  private remove(ballot: BallotRecord): void {
    const voter = voterIdOf(ballot.agentId, ballot.agentIss);
    const ofVoter = this.byVoter.get(voter)!;
    this.count(ofVoter, -1);
    ofVoter.splice(ofVoter.indexOf(ballot), 1);
    if (ofVoter.length === 0) this.byVoter.delete(voter);
    else this.count(ofVoter, 1);
  }

  /** One voter's ballots: its only ballot is sure when the count keeps it as cast; several are one voter's, so none is. */
  private count(ofVoter: BallotRecord[], sign: 1 | -1): void {
    if (ofVoter.length === 0) return;
    const only = ofVoter.length === 1 ? ofVoter[0]! : null;
    if (
      only &&
      typeof only.ballot === 'string' &&
      this.eligible.has(only.participantId) &&
      this.options.includes(only.ballot)
    ) {
      this.sure.set(only.ballot, (this.sure.get(only.ballot) ?? 0) + sign);
    } else {
      this.unsure += sign * ofVoter.length;
    }
  }
}

/** Kept per slate: a decision's options array lives as long as the decision's context does. */
const tallies = new WeakMap<readonly string[], SureTally>();

export function singleChoiceLeadBound(
  ballots: readonly BallotRecord[],
  options: readonly string[],
  electorate: readonly string[],
): number {
  let tally = tallies.get(options);
  if (!tally?.counts(electorate)) {
    tally = new SureTally(electorate, options);
    tallies.set(options, tally);
  }
  return tally.leadOver(ballots);
}
