/**
 * One decision's life: proposing → voting (open ⇄ settling) → sealed → resolved (docs/how-decisions-end.md, The window).
 *
 * Pure: no clock (every event carries `now`), no I/O, no randomness. The room hands each event the
 * facts it needs (electorate, quorum, early close...). What is allowed in which state is decided
 * here: an act the state does not allow is answered with the protocol's error code.
 * `sealed` lasts only until the runtime has signed the receipt and sent D.RECEIPT; a decision is
 * never persisted between the two.
 */
import { assign, enqueueActions, sendParent, setup } from 'xstate';
import { parseBallot } from '../src/domain/ballots.js';
import {
  abstainOnAgreementError,
  emptySlateError,
  notEligible,
  optionProposedEvent,
  propose,
  proposingError,
  voteCastEvent,
  votingStartedEvent,
  withAbstention,
  withChoice,
} from '../src/domain/decision-acts.js';
import { determine, sealRecord } from '../src/domain/determination.js';
import type { DecisionData, DecisionFacts, EventDraft } from '../src/domain/types.js';
import type { ProtocolError } from '../src/errors.js';
import type { DecisionEvent, DecisionReport } from './decision.events.js';

const MAX_SETTLE_RESTARTS = 4;

type Ctx = DecisionData;

const reject = (decisionId: string, error: ProtocolError): DecisionReport => ({
  type: 'D.REJECT',
  decisionId,
  error: error.toSpec(),
});
const accept = (
  decisionId: string,
  info: Record<string, unknown>,
  voter?: { participantId: string; at: number },
): DecisionReport => ({
  type: 'D.ACCEPT',
  decisionId,
  info,
  ...(voter ? { voter } : {}),
});
const report = (draft: EventDraft): DecisionReport => ({ type: 'D.EVENT', draft });

function factsOf(event: DecisionEvent): DecisionFacts {
  if (!('facts' in event)) throw new Error(`event ${event.type} carries no facts`);
  return event.facts;
}

function nowOf(event: DecisionEvent): number {
  if (!('now' in event)) throw new Error(`event ${event.type} carries no time`);
  return event.now;
}

export const decisionMachine = setup({
  types: {} as {
    context: Ctx;
    input: DecisionData;
    events: DecisionEvent;
  },
  guards: {
    isSlate: ({ context }) => context.votingOpensAt !== null && context.votingStartedAt === null,
    determinedSealNow: ({ context, event }) => {
      const facts = factsOf(event);
      return determine(context, facts).determined && (facts.settleWindowSeconds === 0 || restartBoundReached(context));
    },
    determined: ({ context, event }) => determine(context, factsOf(event)).determined,
    notDetermined: ({ context, event }) => !determine(context, factsOf(event)).determined,
    winnerChangedAtBound: ({ context, event }) =>
      determine(context, factsOf(event)).winner !== context.settling?.presumptive && restartBoundReached(context),
    winnerChanged: ({ context, event }) => determine(context, factsOf(event)).winner !== context.settling?.presumptive,
    proposalWindowDue: ({ context, event }) =>
      context.votingOpensAt !== null && context.votingOpensAt <= nowOf(event) && context.options.length > 0,
    votingWindowDue: ({ context, event }) => context.votingEndsAt <= nowOf(event),
    settleDue: ({ context, event }) =>
      context.settling !== null && Math.min(context.settling.endsAt, context.votingEndsAt) <= nowOf(event),
  },
  actions: {
    sealAtWindowEnd: enqueueActions(({ context, event, enqueue }) => {
      const at = context.votingEndsAt;
      enqueue.assign({ seal: sealRecord(context, factsOf(event), at, at), settling: null });
      enqueue.sendParent({ type: 'D.SEALED', decisionId: context.id, at } satisfies DecisionReport);
    }),
    sealAtSettleEnd: enqueueActions(({ context, event, enqueue }) => {
      const settling = context.settling!;
      const at = Math.min(settling.endsAt, context.votingEndsAt);
      enqueue.assign({ seal: sealRecord(context, factsOf(event), at, settling.determinedAt), settling: null });
      enqueue.sendParent({ type: 'D.SEALED', decisionId: context.id, at } satisfies DecisionReport);
    }),
    sealNow: enqueueActions(({ context, event, enqueue }) => {
      const at = nowOf(event);
      enqueue.assign({ seal: sealRecord(context, factsOf(event), at, at), settling: null, everDetermined: true });
      enqueue.sendParent({ type: 'D.SEALED', decisionId: context.id, at } satisfies DecisionReport);
    }),
    // A first determination starts settling; a later one (after a cancel) counts as a restart (docs/how-decisions-end.md, Settling).
    startSettling: assign(({ context, event }) => settleFrom(context, event, context.everDetermined ? 1 : 0)),
    restartSettling: assign(({ context, event }) => settleFrom(context, event, 1)),
    cancelSettling: assign({ settling: null }),
    openVotingAtProposalEnd: enqueueActions(({ context, enqueue }) => {
      const at = context.votingOpensAt!;
      const opened = { ...context, votingStartedAt: at };
      enqueue.assign({ votingStartedAt: at });
      enqueue.sendParent(report(votingStartedEvent(opened, at, null)));
    }),
    recordReceipt: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.RECEIPT') return;
      const seal = context.seal!;
      enqueue.assign({ receipt: event.link });
      enqueue.sendParent(
        report({
          event_type: 'decision.completed',
          occurred_at: seal.at,
          decision_id: context.id,
          actor: null,
          data: {
            seq: context.seq,
            question: context.question,
            outcome: seal.outcome,
            status: seal.status,
            winner: seal.winner,
            receipt_hash: event.link.hash,
            ...(context.agreement ? { agreement: true } : {}),
          },
        }),
      );
      enqueue.sendParent({ type: 'D.RESOLVED', decisionId: context.id, link: event.link } satisfies DecisionReport);
    }),
    choose: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.CHOOSE') return;
      const { facts, actor, now } = event;
      const ineligible = notEligible(context, facts, actor);
      if (ineligible) {
        enqueue.sendParent(reject(context.id, ineligible));
        return;
      }
      let parsed: ReturnType<typeof parseBallot>;
      try {
        parsed = parseBallot(facts.mechanism, context.agreement, context.options, event.choice, {
          slug: facts.slug,
          proposalsOpen: context.votingOpensAt === null && !facts.proposalAuthorityNone,
        });
      } catch (error) {
        enqueue.sendParent(reject(context.id, error as ProtocolError));
        return;
      }
      const { decision, revised } = withChoice(context, actor, parsed.ballot, event.reason, now);
      enqueue.assign({ ballots: decision.ballots, abstentions: decision.abstentions });
      enqueue.sendParent(report(voteCastEvent(context, actor, parsed.ballot, revised, now)));
      enqueue.sendParent(
        accept(
          context.id,
          { act: 'choose', cast_choice: parsed.ballot, revised, weight: parsed.weight },
          actor.participantId === null ? undefined : { participantId: actor.participantId, at: now },
        ),
      );
      enqueue.raise({ type: 'D.EVALUATE', now, facts });
    }),
    abstain: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.ABSTAIN') return;
      const { facts, actor, now } = event;
      const error =
        notEligible(context, facts, actor) ?? (context.agreement ? abstainOnAgreementError(context, facts) : null);
      if (error) {
        enqueue.sendParent(reject(context.id, error));
        return;
      }
      const decision = withAbstention(context, actor, event.reason, now);
      enqueue.assign({ ballots: decision.ballots, abstentions: decision.abstentions });
      enqueue.sendParent(
        report({
          event_type: 'choice.abstained',
          occurred_at: now,
          decision_id: context.id,
          actor: actor.participantId,
          data: {
            seq: context.seq,
            participant_id: actor.participantId,
            display_name: actor.displayName,
            reason: event.reason,
          },
        }),
      );
      enqueue.sendParent(accept(context.id, { act: 'abstain', reason: event.reason }));
      enqueue.raise({ type: 'D.EVALUATE', now, facts });
    }),
    propose: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.PROPOSE') return;
      const { facts, actor, now } = event;
      const result = propose(context, facts, actor, event.option);
      if ('code' in result) {
        enqueue.sendParent(reject(context.id, result));
        return;
      }
      if (result.kind !== 'added') {
        enqueue.sendParent(
          accept(context.id, { act: 'propose', accepted: result.kind === 'duplicate', reason: result.reason }),
        );
        return;
      }
      const stuckSlate =
        context.votingOpensAt !== null && context.votingStartedAt === null && context.votingOpensAt <= now;
      enqueue.assign({ options: result.decision.options, optionProposers: result.decision.optionProposers });
      enqueue.sendParent(report(optionProposedEvent(context, actor, event.option, result.number, now)));
      if (stuckSlate) {
        // docs/how-decisions-end.md, The window: the first option of a slate whose proposal window already elapsed opens choosing now.
        const opened = { ...result.decision, votingOpensAt: now, votingStartedAt: now };
        enqueue.assign({ votingOpensAt: now, votingStartedAt: now });
        enqueue.sendParent(report(votingStartedEvent(opened, now, null)));
      }
      enqueue.sendParent(accept(context.id, { act: 'propose', accepted: true }));
      if (context.votingStartedAt !== null || stuckSlate) enqueue.raise({ type: 'D.EVALUATE', now, facts });
    }),
    startChoosing: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.START_CHOOSING') return;
      const { now, actor } = event;
      const opened = {
        ...context,
        votingOpensAt: now,
        votingEndsAt: now + context.votingWindow * 1000,
        votingStartedAt: now,
      };
      enqueue.assign({
        votingOpensAt: opened.votingOpensAt,
        votingEndsAt: opened.votingEndsAt,
        votingStartedAt: now,
      });
      enqueue.sendParent(report(votingStartedEvent(opened, now, actor)));
      enqueue.sendParent(accept(context.id, { act: 'start_choosing', already_open: false }));
    }),
  },
}).createMachine({
  id: 'decision',
  context: ({ input }) => input,
  initial: 'routing',
  states: {
    routing: {
      always: [{ guard: 'isSlate', target: 'proposing' }, { target: 'voting' }],
    },
    proposing: {
      on: {
        'D.CHOOSE': {
          actions: sendParent(({ context, event }) => reject(context.id, proposingError(context, factsOf(event)))),
        },
        'D.ABSTAIN': {
          actions: sendParent(({ context, event }) => reject(context.id, proposingError(context, factsOf(event)))),
        },
        'D.PROPOSE': [
          {
            guard: ({ context, event }) =>
              context.votingOpensAt !== null && context.votingOpensAt <= event.now && context.options.length === 0,
            target: 'voting',
            actions: 'propose',
          },
          { actions: 'propose' },
        ],
        'D.START_CHOOSING': [
          {
            guard: ({ context }) => context.options.length === 0,
            actions: sendParent(({ context, event }) => reject(context.id, emptySlateError(context, factsOf(event)))),
          },
          { target: 'voting', actions: 'startChoosing' },
        ],
        'D.ADVANCE': [
          { guard: 'proposalWindowDue', target: 'voting', actions: 'openVotingAtProposalEnd' },
          { guard: 'votingWindowDue', target: 'sealed', actions: 'sealAtWindowEnd' },
        ],
      },
    },
    voting: {
      initial: 'open',
      on: {
        'D.CHOOSE': { actions: 'choose' },
        'D.ABSTAIN': { actions: 'abstain' },
        'D.PROPOSE': { actions: 'propose' },
        'D.START_CHOOSING': {
          actions: sendParent(({ context }) => accept(context.id, { act: 'start_choosing', already_open: true })),
        },
      },
      states: {
        open: {
          on: {
            'D.EVALUATE': [
              { guard: 'determinedSealNow', target: '#decision.sealed', actions: 'sealNow' },
              { guard: 'determined', target: 'settling', actions: 'startSettling' },
            ],
            'D.ADVANCE': { guard: 'votingWindowDue', target: '#decision.sealed', actions: 'sealAtWindowEnd' },
          },
        },
        settling: {
          on: {
            'D.EVALUATE': [
              { guard: 'notDetermined', target: 'open', actions: 'cancelSettling' },
              { guard: 'winnerChangedAtBound', target: '#decision.sealed', actions: 'sealNow' },
              { guard: 'winnerChanged', actions: 'restartSettling' },
            ],
            'D.ADVANCE': { guard: 'settleDue', target: '#decision.sealed', actions: 'sealAtSettleEnd' },
          },
        },
      },
    },
    sealed: {
      on: { 'D.RECEIPT': { target: 'resolved', actions: 'recordReceipt' } },
    },
    resolved: {},
  },
});

function settleFrom(context: Ctx, event: DecisionEvent, restartsAdded: number): Partial<Ctx> {
  const now = nowOf(event);
  const facts = factsOf(event);
  return {
    settling: {
      endsAt: now + facts.settleWindowSeconds * 1000,
      determinedAt: now,
      presumptive: determine(context, facts).winner,
    },
    restarts: context.restarts + restartsAdded,
    everDetermined: true,
  };
}

function restartBoundReached(context: Ctx): boolean {
  return context.everDetermined && context.restarts >= MAX_SETTLE_RESTARTS;
}

export type DecisionMachine = typeof decisionMachine;

/** The phase name used by read views and deadlines. */
export function decisionPhase(value: unknown): 'proposing' | 'voting' | 'settling' | 'sealed' | 'resolved' {
  if (value === 'proposing' || value === 'sealed' || value === 'resolved') return value;
  if (typeof value === 'object' && value !== null && 'voting' in value) {
    return (value as { voting: string }).voting === 'settling' ? 'settling' : 'voting';
  }
  return 'voting';
}
