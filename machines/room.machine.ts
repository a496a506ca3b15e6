/**
 * A room: active (open ⇄ deciding) → concluding → concluded (docs/concepts.md, Rooms).
 *
 * The room owns members, discussion and the receipt chain; each decision is a child actor
 * (decision.machine.ts) spawned by `ask`. Room-level rules (terminal state, admission, authority,
 * selection) are decided here; decision-level rules (phase, eligibility, ballot) by the child.
 * Every outcome of a command is emitted as a `reply`; events for the timeline as `event`;
 * seals and the conclusion as `seal` / `conclude`, which the runtime answers with RECEIPT_SIGNED.
 */
import { assign, emit, enqueueActions, setup, stopChild } from 'xstate';
import {
  alreadyOpenError,
  type DecisionIndexEntry,
  discussionCapError,
  emptySpeech,
  withMessage,
  withoutDecision,
  factsFor,
  newMessage,
  openDecisionList,
  type RoomContext,
  selectDecision,
  validateAsk,
} from '../src/domain/room-acts.js';
import { iso } from '../src/domain/format.js';
import { operatorOnly, planInvite, planJoin, planRole, planSettings } from '../src/domain/membership.js';
import { authorityDenied, requireSeatActor, satisfiesAuthority, withVoteStamped } from '../src/domain/roster.js';
import type { DecisionData, RoomData } from '../src/domain/types.js';
import { invalidInput, protocolError, type ErrorSpec, type ProtocolError } from '../src/errors.js';
import type { DecisionEvent } from './decision.events.js';
import { decisionMachine } from './decision.machine.js';
import type { RoomCommand, RoomEmitted, RoomEvent } from './room.events.js';

export type RoomInput = Omit<
  RoomData,
  | 'members'
  | 'invites'
  | 'speech'
  | 'decisionIds'
  | 'openDecisionIds'
  | 'sealOrder'
  | 'chain'
  | 'conclusion'
  | 'rosterCheckedAt'
>;

const fail = (error: ProtocolError | ErrorSpec): RoomEmitted => ({
  type: 'reply',
  ok: false,
  error: 'toSpec' in error ? error.toSpec() : error,
});
const ok = (info: Record<string, unknown>): RoomEmitted => ({ type: 'reply', ok: true, info });

function roomEvent(now: number, actor: string | null, eventType: string, data: Record<string, unknown>): RoomEmitted {
  return { type: 'event', draft: { event_type: eventType, occurred_at: now, decision_id: null, actor, data } };
}

function route(ctx: RoomContext, path: string): string {
  return `POST /api/rooms/${ctx.slug}/${path}`;
}

function concludedError(ctx: RoomContext): ProtocolError {
  return protocolError(
    'room.concluded',
    `Room ${ctx.slug} is closed and read-only: no further acts or joins are possible. Its records stay readable (GET /api/rooms/${ctx.slug}/outcome).`,
    {
      hint: 'Read the outcome; start a new room for further decisions.',
      details: { slug: ctx.slug, concluded_at: iso(ctx.conclusion?.at) },
    },
  );
}

export const roomMachine = setup({
  types: {} as {
    context: RoomContext;
    input: RoomInput;
    events: RoomEvent;
    emitted: RoomEmitted;
  },
  actors: { decision: decisionMachine },
  guards: {
    hasOpenDecisions: ({ context }) => context.openDecisionIds.length > 0,
    noOpenDecisions: ({ context }) => context.openDecisionIds.length === 0,
    mayClose: ({ context, event }) => event.type === 'CLOSE' && closeRefusal(context, event) === null,
  },
  actions: {
    replyConcluded: emit(({ context }) => fail(concludedError(context))),
    relayEvent: emit(({ event }) => {
      if (event.type !== 'D.EVENT') throw new Error('relayEvent needs D.EVENT');
      return { type: 'event', draft: event.draft } as RoomEmitted;
    }),
    recordVote: assign(({ context, event }) => {
      if (event.type !== 'D.ACCEPT' || event.voter === undefined) return {};
      const { participantId, at } = event.voter;
      return { members: withVoteStamped(context.members, participantId, at) };
    }),
    archive: stopChild(({ event }) => {
      if (event.type !== 'ARCHIVE') throw new Error('archive needs ARCHIVE');
      return event.decisionId;
    }),
    relayAccept: emit(({ event }) => {
      if (event.type !== 'D.ACCEPT') throw new Error('relayAccept needs D.ACCEPT');
      return ok({ decision_id: event.decisionId, ...event.info });
    }),
    relayReject: emit(({ event }) => {
      if (event.type !== 'D.REJECT') throw new Error('relayReject needs D.REJECT');
      return fail(event.error);
    }),
    recordSeal: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'D.SEALED') return;
      enqueue.assign({
        openDecisionIds: context.openDecisionIds.filter((id) => id !== event.decisionId),
        sealOrder: [...context.sealOrder, event.decisionId],
      });
      enqueue.emit({ type: 'seal', decisionId: event.decisionId });
    }),
    recordReceipt: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'RECEIPT_SIGNED') return;
      enqueue.assign({ chain: { head: event.link.hash, length: event.link.sequence } });
      if (event.decisionId !== null) {
        enqueue.assign({ speech: withoutDecision(context.speech, event.decisionId) });
        enqueue.sendTo(event.decisionId, { type: 'D.RECEIPT', link: event.link } satisfies DecisionEvent);
        return;
      }
      const conclusion = { ...context.conclusion!, receipt: event.link };
      enqueue.assign({ conclusion });
      enqueue.emit({
        type: 'event',
        draft: {
          event_type: 'room.concluded',
          occurred_at: conclusion.at,
          decision_id: null,
          actor: conclusion.byParticipantId,
          data: {
            ...(conclusion.statement !== null ? { statement: conclusion.statement } : {}),
            concluded_by: conclusion.concludedBy,
            receipt_hash: event.link.hash,
          },
        },
      });
    }),
    rosterCheck: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'ROSTER_CHECK') return;
      enqueue.assign({ rosterCheckedAt: event.now });
      reevaluateOpen(context, event.now, enqueue);
    }),
    advance: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'ADVANCE') return;
      const entry = context.decisions.find((d) => d.id === event.decisionId);
      if (!entry || !context.openDecisionIds.includes(entry.id)) return;
      enqueue.sendTo(entry.id, {
        type: 'D.ADVANCE',
        now: event.now,
        facts: factsFor(context, entry, event.now),
      } satisfies DecisionEvent);
    }),
    join: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'JOIN') return;
      const { seat, admission, now } = event;
      const plan = planJoin(context, seat, admission, now);
      if (plan instanceof Error) {
        enqueue.emit(fail(plan));
        return;
      }
      const { member } = plan;
      const info = { participant_id: member.id, display_name: member.displayName, role: member.role };
      if (plan.kind === 'reconnect') {
        enqueue.emit(ok({ ...info, reconnected: true }));
        return;
      }
      const invite = plan.invite;
      const members =
        plan.kind === 'recover'
          ? context.members.map((m) => (m.id === member.id ? member : m))
          : [...context.members, member];
      const invites = invite ? context.invites.map((i) => (i.code === invite.code ? invite : i)) : context.invites;
      enqueue.assign({ members, invites });
      if (plan.kind === 'recover') {
        enqueue.emit(ok({ ...info, recovered: true }));
        return;
      }
      if (invite) {
        enqueue.emit(
          roomEvent(now, member.id, 'invite.accepted', {
            code: invite.code,
            label: invite.label,
            participant_id: member.id,
          }),
        );
      }
      const via = invite ? 'invite' : seat.via;
      enqueue.emit(
        roomEvent(now, member.id, 'participant.joined', {
          participant_id: member.id,
          name: member.displayName,
          role: member.role,
          via,
        }),
      );
      enqueue.emit(ok(info));
      reevaluateOpen({ ...context, members, invites }, now, enqueue);
    }),
    invite: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'INVITE') return;
      const authority = context.config.invite_authority;
      if (!satisfiesAuthority(context, event.actor, authority)) {
        enqueue.emit(fail(authorityDenied('invite_authority', authority, 'create invites', route(context, 'invites'))));
        return;
      }
      if (event.invalid || !event.invite) {
        enqueue.emit(fail(event.invalid ?? invalidInput(undefined, 'Invalid invite request.')));
        return;
      }
      const invite = planInvite(context, event.invite, event.now);
      if (invite instanceof Error) {
        enqueue.emit(fail(invite));
        return;
      }
      const invites = [...context.invites, invite];
      enqueue.assign({ invites });
      enqueue.emit(
        roomEvent(event.now, event.actor.participantId, 'invite.created', {
          code: invite.code,
          label: invite.label,
          role: invite.role,
          expected: invite.expected,
        }),
      );
      enqueue.emit(ok({ code: invite.code }));
      reevaluateOpen({ ...context, invites }, event.now, enqueue);
    }),
    revokeInvite: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'REVOKE_INVITE') return;
      const authority = context.config.invite_authority;
      const path = `DELETE /api/rooms/${context.slug}/invites/${event.code}`;
      if (!satisfiesAuthority(context, event.actor, authority)) {
        enqueue.emit(fail(authorityDenied('invite_authority', authority, 'revoke invites', path)));
        return;
      }
      const invite = context.invites.find((i) => i.code === event.code);
      if (!invite) {
        enqueue.emit(
          fail(
            protocolError('invite.invalid', `No invite with code ${event.code} in room ${context.slug} (${path}).`, {
              details: { reason: 'not_found' },
            }),
          ),
        );
        return;
      }
      if (invite.revokedAt === null) {
        const revoked = { ...invite, revokedAt: event.now };
        const invites = context.invites.map((i) => (i.code === invite.code ? revoked : i));
        enqueue.assign({ invites });
        enqueue.emit(
          roomEvent(event.now, event.actor.participantId, 'invite.revoked', { code: invite.code, label: invite.label }),
        );
        reevaluateOpen({ ...context, invites }, event.now, enqueue);
      }
      enqueue.emit(ok({ code: invite.code }));
    }),
    setRole: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'SET_ROLE') return;
      const path = `PATCH /api/rooms/${context.slug}/members/${event.target}`;
      const refused = operatorOnly(event.actor, 'change member roles', path) ?? event.invalid ?? null;
      if (refused) {
        enqueue.emit(fail(refused));
        return;
      }
      const member = planRole(context, event.target, event.role, path);
      if (member instanceof Error) {
        enqueue.emit(fail(member));
        return;
      }
      const before = context.members.find((m) => m.id === member.id)!;
      if (before.role !== member.role) {
        const members = context.members.map((m) => (m.id === member.id ? member : m));
        enqueue.assign({ members });
        enqueue.emit(
          roomEvent(event.now, event.actor.participantId, 'participant.role_updated', {
            participant_id: member.id,
            name: member.displayName,
            role: member.role,
          }),
        );
        reevaluateOpen({ ...context, members }, event.now, enqueue);
      }
      enqueue.emit(ok({ participant_id: member.id, display_name: member.displayName, role: member.role }));
    }),
    updateSettings: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'UPDATE_SETTINGS') return;
      const path = `PATCH /api/rooms/${context.slug}/settings`;
      const refused = operatorOnly(event.actor, 'change room settings', path) ?? event.invalid ?? null;
      if (refused) {
        enqueue.emit(fail(refused));
        return;
      }
      const plan = planSettings(context, event.settings);
      if (plan instanceof Error) {
        enqueue.emit(fail(plan));
        return;
      }
      if (plan.changed.length > 0) {
        enqueue.assign({ config: plan.config });
        enqueue.emit(
          roomEvent(event.now, event.actor.participantId, 'room.settings_updated', { changed: plan.changed }),
        );
        reevaluateOpen({ ...context, config: plan.config }, event.now, enqueue);
      }
      enqueue.emit(ok({ changed: plan.changed }));
    }),
    ask: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'ASK') return;
      const { actor, now } = event;
      const authority = context.config.decision_opening_authority;
      if (!event.atCreation && !satisfiesAuthority(context, actor, authority)) {
        enqueue.emit(
          fail(authorityDenied('decision_opening_authority', authority, 'open a decision', route(context, 'ask'))),
        );
        return;
      }
      if (event.invalid || !event.input) {
        enqueue.emit(fail(event.invalid ?? invalidInput(undefined, 'Invalid ask request.')));
        return;
      }
      const input = event.input;
      const electorate = validateAsk(context, input);
      if (electorate !== null && !Array.isArray(electorate)) {
        enqueue.emit(fail(electorate));
        return;
      }
      if (context.openDecisionIds.length >= context.config.max_open_decisions) {
        enqueue.emit(fail(alreadyOpenError(context)));
        return;
      }
      const seq = context.decisions.length + 1;
      const votingWindow = input.voting_window ?? context.config.voting_window;
      const slate = input.proposal_window !== undefined;
      const votingOpensAt = slate ? now + input.proposal_window! * 1000 : null;
      const decision: DecisionData = {
        id: event.decisionId,
        seq,
        question: input.question,
        context: input.context ?? null,
        options: input.options ?? [],
        optionProposers: (input.options ?? []).map(() => null),
        eligibleIds: electorate,
        openedAt: now,
        openedBy: { participantId: actor.participantId, displayName: actor.displayName },
        votingOpensAt,
        votingEndsAt: (votingOpensAt ?? now) + votingWindow * 1000,
        votingWindow,
        votingStartedAt: slate ? null : now,
        agreement: input.agreement === true,
        ballots: [],
        abstentions: [],
        settling: null,
        restarts: 0,
        everDetermined: false,
        seal: null,
        receipt: null,
      };
      const entry: DecisionIndexEntry = { id: decision.id, seq, question: decision.question, eligibleIds: electorate };
      enqueue.assign({
        decisions: [...context.decisions, entry],
        decisionIds: [...context.decisionIds, decision.id],
        openDecisionIds: [...context.openDecisionIds, decision.id],
      });
      enqueue.spawnChild('decision', { id: decision.id, input: decision });
      enqueue.emit({
        type: 'event',
        draft: {
          event_type: 'decision.opened',
          occurred_at: now,
          decision_id: decision.id,
          actor: actor.participantId,
          data: {
            seq,
            question: decision.question,
            options: decision.options,
            status: slate ? 'proposing' : 'voting',
            ...(votingOpensAt !== null ? { voting_opens_at: iso(votingOpensAt) } : {}),
            voting_ends_at: iso(decision.votingEndsAt),
            opened_by: { participant_id: actor.participantId, display_name: actor.displayName },
            ...(decision.agreement ? { agreement: true } : {}),
          },
        },
      });
      enqueue.emit(ok({ decision_id: decision.id }));
    }),
    startChoosing: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'START_CHOOSING') return;
      const authority = context.config.decision_opening_authority;
      const path = route(context, 'start-choosing');
      if (!satisfiesAuthority(context, event.actor, authority)) {
        enqueue.emit(fail(authorityDenied('decision_opening_authority', authority, 'start choosing', path)));
        return;
      }
      if (event.invalid) {
        enqueue.emit(fail(event.invalid));
        return;
      }
      const children = self.getSnapshot().children as Record<string, { getSnapshot(): { value: unknown } } | undefined>;
      const isProposing = (id: string) => children[id]?.getSnapshot().value === 'proposing';
      const entry = startChoosingTarget(context, event, path, isProposing);
      if (!entry || 'code' in entry) {
        enqueue.emit(fail(entry ?? noOpenForStart(context, path)));
        return;
      }
      enqueue.sendTo(entry.id, {
        type: 'D.START_CHOOSING',
        now: event.now,
        actor: event.actor,
        facts: factsFor(context, entry, event.now),
      } satisfies DecisionEvent);
    }),
    discuss: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'DISCUSS') return;
      const path = route(context, 'discuss');
      const error =
        requireSeatActor(context, event.actor, 'discuss', path) ??
        (event.invalid ? event.invalid : null) ??
        (context.config.deliberation_mode === 'disabled'
          ? invalidInput(
              'body',
              `Discussion is disabled in room ${context.slug} (deliberation_mode is "disabled"). (${path})`,
              'deliberation_disabled',
            )
          : null);
      if (error) {
        enqueue.emit(fail(error));
        return;
      }
      const entry = selectDecision(context, event.decision, 'discuss', path, true);
      if (entry !== null && 'code' in entry) {
        enqueue.emit(fail(entry));
        return;
      }
      const capped = discussionCapError(context, event.actor, entry?.id ?? null, event.now);
      if (capped) {
        enqueue.emit(fail(capped));
        return;
      }
      const message = newMessage(event.messageId, event.actor, event.body, event.stance, entry, event.now);
      enqueue.assign({
        speech: withMessage(context.speech, message, event.now),
        members: context.members.map((m) =>
          m.id === event.actor.participantId ? { ...m, deliberatedAt: event.now } : m,
        ),
      });
      enqueue.emit({
        type: 'event',
        draft: {
          event_type: 'discussion.posted',
          occurred_at: event.now,
          decision_id: message.decisionId,
          actor: event.actor.participantId,
          data: {
            id: message.id,
            participant_id: message.participantId,
            display_name: message.displayName,
            body: message.body,
            ...(message.stance !== null ? { stance: message.stance } : {}),
            posted_at: iso(message.postedAt),
            decision_id: message.decisionId,
            ...(message.decisionSeq !== null ? { seq: message.decisionSeq } : {}),
          },
        },
      });
      enqueue.emit(ok({ id: message.id }));
    }),
    propose: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'PROPOSE') return;
      const path = route(context, 'options');
      const authority = context.config.option_proposal_authority;
      const error =
        requireSeatActor(context, event.actor, 'propose options', path) ??
        (!satisfiesAuthority(context, event.actor, authority)
          ? authorityDenied('option_proposal_authority', authority, 'propose options', path)
          : null) ??
        event.invalid ??
        null;
      if (error) {
        enqueue.emit(fail(error));
        return;
      }
      const entry = selectDecision(context, event.decision, 'propose', path);
      if (entry === null || 'code' in entry) {
        enqueue.emit(fail(entry!));
        return;
      }
      enqueue.sendTo(entry.id, {
        type: 'D.PROPOSE',
        now: event.now,
        actor: event.actor,
        option: event.option,
        facts: factsFor(context, entry, event.now),
      } satisfies DecisionEvent);
    }),
    choose: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'CHOOSE' && event.type !== 'ABSTAIN') return;
      const isChoose = event.type === 'CHOOSE';
      const action = isChoose ? 'choose' : 'abstain';
      const path = route(context, action);
      const error = requireSeatActor(context, event.actor, isChoose ? 'choose' : 'abstain', path);
      if (error) {
        enqueue.emit(fail(error));
        return;
      }
      if (event.invalid) {
        enqueue.emit(fail(event.invalid));
        return;
      }
      const entry = selectDecision(context, event.decision, action, path);
      if (entry === null || 'code' in entry) {
        enqueue.emit(fail(entry!));
        return;
      }
      const facts = factsFor(context, entry, event.now);
      if (isChoose) {
        // votedAt is recorded when the decision accepts the ballot (recordVote): a refused choice moves nothing.
        enqueue.sendTo(entry.id, {
          type: 'D.CHOOSE',
          now: event.now,
          actor: event.actor,
          choice: event.choice,
          reason: event.reason,
          facts,
        } satisfies DecisionEvent);
      } else {
        enqueue.sendTo(entry.id, {
          type: 'D.ABSTAIN',
          now: event.now,
          actor: event.actor,
          reason: event.reason,
          facts,
        } satisfies DecisionEvent);
      }
    }),
    close: assign(({ event }) => {
      if (event.type !== 'CLOSE') return {};
      return {
        conclusion: {
          at: event.now,
          statement: event.statement,
          concludedBy: event.actor.agentId,
          byParticipantId: event.actor.participantId,
          receipt: null,
        },
      };
    }),
    announceClose: enqueueActions(({ enqueue }) => {
      enqueue.emit({ type: 'conclude' });
      enqueue.emit(ok({ concluded: true }));
    }),
    refuseClose: emit(({ context, event }) => {
      if (event.type !== 'CLOSE') throw new Error('refuseClose needs CLOSE');
      return fail(closeRefusal(context, event) ?? openDecisionsBlockClose(context));
    }),
  },
}).createMachine({
  id: 'room',
  context: ({ input }) => ({
    ...input,
    members: [],
    invites: [],
    speech: emptySpeech(),
    decisions: [],
    decisionIds: [],
    openDecisionIds: [],
    sealOrder: [],
    chain: { head: null, length: 0 },
    conclusion: null,
    rosterCheckedAt: input.createdAt,
  }),
  initial: 'active',
  on: {
    'D.EVENT': { actions: 'relayEvent' },
    'D.ACCEPT': { actions: ['recordVote', 'relayAccept'] },
    'D.REJECT': { actions: 'relayReject' },
    'D.SEALED': { actions: 'recordSeal' },
    'D.RESOLVED': {},
    ARCHIVE: { actions: 'archive' },
    ADVANCE: { actions: 'advance' },
    ROSTER_CHECK: { actions: 'rosterCheck' },
  },
  states: {
    active: {
      initial: 'open',
      on: {
        JOIN: { actions: 'join' },
        ASK: { actions: 'ask' },
        START_CHOOSING: { actions: 'startChoosing' },
        DISCUSS: { actions: 'discuss' },
        PROPOSE: { actions: 'propose' },
        CHOOSE: { actions: 'choose' },
        ABSTAIN: { actions: 'choose' },
        RECEIPT_SIGNED: { actions: 'recordReceipt' },
        INVITE: { actions: 'invite' },
        REVOKE_INVITE: { actions: 'revokeInvite' },
        SET_ROLE: { actions: 'setRole' },
        UPDATE_SETTINGS: { actions: 'updateSettings' },
      },
      states: {
        open: {
          always: { guard: 'hasOpenDecisions', target: 'deciding' },
          on: {
            CLOSE: [
              { guard: 'mayClose', target: '#room.concluding', actions: ['close', 'announceClose'] },
              { actions: 'refuseClose' },
            ],
          },
        },
        deciding: {
          always: { guard: 'noOpenDecisions', target: 'open' },
          on: { CLOSE: { actions: 'refuseClose' } },
        },
      },
    },
    concluding: {
      on: {
        RECEIPT_SIGNED: { target: 'concluded', actions: 'recordReceipt' },
      },
    },
    concluded: {
      on: {
        JOIN: { actions: 'replyConcluded' },
        ASK: { actions: 'replyConcluded' },
        START_CHOOSING: { actions: 'replyConcluded' },
        DISCUSS: { actions: 'replyConcluded' },
        PROPOSE: { actions: 'replyConcluded' },
        CHOOSE: { actions: 'replyConcluded' },
        ABSTAIN: { actions: 'replyConcluded' },
        CLOSE: { actions: 'replyConcluded' },
        INVITE: { actions: 'replyConcluded' },
        REVOKE_INVITE: { actions: 'replyConcluded' },
        SET_ROLE: { actions: 'replyConcluded' },
        UPDATE_SETTINGS: { actions: 'replyConcluded' },
      },
    },
  },
});

export type RoomMachine = typeof roomMachine;

/** Authority (step 8) and field validation (step 9) of close; open decisions (step 10) are the state's. */
function closeRefusal(
  ctx: RoomContext,
  event: Extract<RoomCommand, { type: 'CLOSE' }>,
): ProtocolError | ErrorSpec | null {
  const authority = ctx.config.conclusion_authority;
  if (!satisfiesAuthority(ctx, event.actor, authority)) {
    return authorityDenied('conclusion_authority', authority, 'close the room', route(ctx, 'close'));
  }
  return event.invalid ?? null;
}

function openDecisionsBlockClose(ctx: RoomContext): ProtocolError {
  const open = openDecisionList(ctx);
  return protocolError(
    'decision.not_open',
    `Room ${ctx.slug} can only be closed when no decision is open. Open decisions: ${open
      .map((d) => `${d.seq} ("${d.question}")`)
      .join(
        ', ',
      )}. Let them resolve (choose, or wait for their windows), then close (the close_room action / POST /api/rooms/${ctx.slug}/close).`,
    { hint: 'Wait for the open decisions to resolve, then close.', details: { open_decisions: open } },
  );
}

function startChoosingTarget(
  ctx: RoomContext,
  event: Extract<RoomCommand, { type: 'START_CHOOSING' }>,
  path: string,
  isProposing: (id: string) => boolean,
): DecisionIndexEntry | ProtocolError | null {
  if (event.decisionId !== undefined && event.decision !== undefined) {
    const byId = ctx.decisions.find((d) => d.id === event.decisionId);
    if (byId?.seq !== event.decision) {
      return invalidInput(
        'decision_id',
        `decision_id and decision name different decisions; send only one of them (${path}).`,
        'invalid_value',
      );
    }
  }
  if (event.decisionId !== undefined) {
    const byId = ctx.decisions.find((d) => d.id === event.decisionId);
    if (!byId) return selectDecision(ctx, Number.MAX_SAFE_INTEGER, 'start_choosing', path) as ProtocolError;
    return selectDecision(ctx, byId.seq, 'start_choosing', path);
  }
  if (event.decision !== undefined) return selectDecision(ctx, event.decision, 'start_choosing', path);
  const proposing = ctx.openDecisionIds.find(isProposing);
  if (proposing !== undefined) return ctx.decisions.find((d) => d.id === proposing)!;
  return selectDecision(ctx, undefined, 'start_choosing', path) as DecisionIndexEntry | ProtocolError | null;
}

function noOpenForStart(ctx: RoomContext, path: string): ProtocolError {
  return protocolError(
    'decision.not_open',
    `No decision is open in room ${ctx.slug}, so there is nothing to start choosing on (${path}).`,
    {
      details: { open_decisions: [] },
    },
  );
}

/** docs/how-decisions-end.md, With early close: joins, role changes and settings can change a lock; every open decision re-evaluates. */
function reevaluateOpen(
  ctx: RoomContext,
  now: number,
  enqueue: { sendTo: (id: string, event: DecisionEvent) => void },
): void {
  for (const id of ctx.openDecisionIds) {
    const entry = ctx.decisions.find((d) => d.id === id)!;
    enqueue.sendTo(id, { type: 'D.EVALUATE', now, facts: factsFor(ctx, entry, now) });
  }
}
