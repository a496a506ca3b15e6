/**
 * Pure state changes of one decision (docs/concepts.md, Decisions and slates). The decision machine decides
 * WHEN each may happen; these functions say WHAT happens.
 */
import { invalidInput, protocolError, type ProtocolError } from '../errors.js';
import { type CanonicalBallot, compareVoters } from '../mechanisms/index.js';
import { slateTextError } from './config.js';
import { clip, iso } from './format.js';
import { ballotText, resolveOptionRef, singleChoiceNumber } from './ballots.js';
import { howTheyDiffer, LOOKALIKE_RULE, lookalikeOf } from './shown-text.js';
import type { Actor, BallotRecord, DecisionData, DecisionFacts, EventDraft } from './types.js';

export function notEligible(decision: DecisionData, facts: DecisionFacts, actor: Actor): ProtocolError | null {
  if (actor.participantId !== null && facts.electorate.includes(actor.participantId)) return null;
  return protocolError(
    'choice.not_eligible',
    `You are not in the electorate of decision ${decision.seq} ("${decision.question}"), so you cannot choose or abstain on it. You may still read, discuss and propose. (the choose action / POST /api/rooms/${facts.slug}/choose)`,
    { details: { seq: decision.seq } },
  );
}

export function withChoice(
  decision: DecisionData,
  actor: Actor,
  ballot: CanonicalBallot,
  rationale: string | null,
  now: number,
): { decision: DecisionData; revised: boolean } {
  const pid = actor.participantId!;
  const earlier = decision.ballots.findIndex((b) => b.participantId === pid);
  const revised = earlier >= 0 || decision.abstentions.some((a) => a.participantId === pid);
  // A first ballot (the common case) needs no filtering pass.
  const ballots = earlier >= 0 ? decision.ballots.filter((b) => b.participantId !== pid) : decision.ballots.slice();
  const cast: BallotRecord = {
    participantId: pid,
    agentId: actor.agentId,
    mandateRef: actor.mandateRef,
    ...(actor.agentIss ? { agentIss: actor.agentIss } : {}),
    ballot,
    castAt: now,
    rationale,
  };
  // Kept in engine order (cast_at, then agent id and issuer; determination.ts): ballots cast in the
  // same instant, as a drained batch casts them, then need no sorting each time they are counted.
  let at = ballots.length;
  while (at > 0 && ballots[at - 1]!.castAt === now && compareVoters(ballots[at - 1]!, cast) > 0) at--;
  ballots.splice(at, 0, cast);
  return {
    decision: { ...decision, ballots, abstentions: decision.abstentions.filter((a) => a.participantId !== pid) },
    revised,
  };
}

export function withAbstention(decision: DecisionData, actor: Actor, reason: string, now: number): DecisionData {
  const pid = actor.participantId!;
  return {
    ...decision,
    ballots: decision.ballots.filter((b) => b.participantId !== pid),
    abstentions: [
      ...decision.abstentions.filter((a) => a.participantId !== pid),
      {
        participantId: pid,
        agentId: actor.agentId,
        ...(actor.agentIss ? { agentIss: actor.agentIss } : {}),
        reason,
        declaredAt: now,
      },
    ],
  };
}

export function voteCastEvent(
  decision: DecisionData,
  actor: Actor,
  ballot: CanonicalBallot,
  revised: boolean,
  now: number,
): EventDraft {
  const number = singleChoiceNumber(decision.options, ballot);
  return {
    event_type: 'vote.cast',
    occurred_at: now,
    decision_id: decision.id,
    actor: actor.participantId,
    data: {
      seq: decision.seq,
      participant_id: actor.participantId,
      display_name: actor.displayName,
      ...(number !== null ? { option_number: number } : {}),
      choice: ballotText(ballot),
      revised,
      ...(decision.agreement ? { agreement: true } : {}),
    },
  };
}

export type ProposalResult =
  | { kind: 'added'; decision: DecisionData; number: number }
  | { kind: 'duplicate'; reason: string }
  | { kind: 'frozen'; reason: string };

export function propose(
  decision: DecisionData,
  facts: DecisionFacts,
  actor: Actor,
  option: string,
): ProposalResult | ProtocolError {
  if (decision.votingOpensAt !== null && decision.votingStartedAt !== null) {
    return {
      kind: 'frozen',
      reason: `The slate of decision ${decision.seq} is frozen because choosing has started; choose among the current options instead.`,
    };
  }
  const existing = resolveOptionRef(decision.options, option);
  if (existing !== null) {
    return {
      kind: 'duplicate',
      reason: `The option is already present as option ${existing + 1} ("${clip(decision.options[existing]!, 80)}"); the slate is unchanged.`,
    };
  }
  // A proposal that only reads like an existing option is refused, never merged into it or added:
  // beside it, a ballot or receipt naming one would read as the other.
  const lookalike = lookalikeOf(decision.options, option);
  if (lookalike !== null) {
    const existing = decision.options[lookalike]!;
    return invalidInput(
      'option',
      `The option reads the same as option ${lookalike + 1} ("${clip(existing, 80)}"): ${howTheyDiffer(existing, option)}. ${LOOKALIKE_RULE} so the two could not be told apart on a ballot or receipt. Choose option ${lookalike + 1} by its number, or propose a text that differs visibly; options that differ only in case stay distinct (the propose action / POST /api/rooms/${facts.slug}/options).`,
      'lookalike',
      { like_option: lookalike + 1 },
    );
  }
  if (decision.options.length >= facts.maxOptions) {
    return invalidInput(
      'option',
      `Decision ${decision.seq} already holds ${facts.maxOptions} options, the room's max_options. Choose among the current options. (the propose action / POST /api/rooms/${facts.slug}/options)`,
      'option_cap_reached',
    );
  }
  const slateError = slateTextError(
    [...decision.options, option],
    'option',
    `the propose action / POST /api/rooms/${facts.slug}/options`,
  );
  if (slateError) return slateError;
  return {
    kind: 'added',
    decision: {
      ...decision,
      options: [...decision.options, option],
      optionProposers: [...decision.optionProposers, actor.participantId],
    },
    number: decision.options.length + 1,
  };
}

export function optionProposedEvent(
  decision: DecisionData,
  actor: Actor,
  option: string,
  number: number,
  now: number,
): EventDraft {
  return {
    event_type: 'option.proposed',
    occurred_at: now,
    decision_id: decision.id,
    actor: actor.participantId,
    data: {
      seq: decision.seq,
      option,
      number,
      proposed_by: { participant_id: actor.participantId, display_name: actor.displayName },
    },
  };
}

export function votingStartedEvent(decision: DecisionData, at: number, actor: Actor | null): EventDraft {
  return {
    event_type: 'decision.voting_phase_started',
    occurred_at: at,
    decision_id: decision.id,
    actor: actor?.participantId ?? null,
    data: {
      seq: decision.seq,
      options: decision.options,
      voting_ends_at: iso(decision.votingEndsAt),
      ...(actor ? { started_by: { participant_id: actor.participantId, display_name: actor.displayName } } : {}),
    },
  };
}

export function emptySlateError(decision: DecisionData, facts: DecisionFacts): ProtocolError {
  return invalidInput(
    'decision',
    `Decision ${decision.seq} has no options yet, so choosing cannot start. Propose options first (the propose action / POST /api/rooms/${facts.slug}/options), then call start_choosing / POST /api/rooms/${facts.slug}/start-choosing.`,
    'empty_slate',
  );
}

export function proposingError(decision: DecisionData, facts: DecisionFacts): ProtocolError {
  return protocolError(
    'decision.proposing',
    `Decision ${decision.seq} is still collecting options; choices open when choosing starts${decision.votingOpensAt !== null ? ` (at ${new Date(decision.votingOpensAt).toISOString()} at the latest)` : ''}. Propose options (the propose action / POST /api/rooms/${facts.slug}/options) or ask an authorized member to start choosing (POST /api/rooms/${facts.slug}/start-choosing).`,
    {
      hint: 'Wait for choosing to start, then choose.',
      details: {
        seq: decision.seq,
        voting_opens_at: iso(decision.votingOpensAt),
      },
    },
  );
}

export function abstainOnAgreementError(decision: DecisionData, facts: DecisionFacts): ProtocolError {
  return invalidInput(
    'reason',
    `Decision ${decision.seq} is an agreement decision: abstention is unavailable. Accept an option with the choose action (POST /api/rooms/${facts.slug}/choose) or discuss instead.`,
    'abstain_on_agreement',
  );
}
