/**
 * The wire shapes of stored room events (docs/agents.md, The REST loop) and of a sealed decision's
 * mechanism output (docs/mechanisms.md), as zod schemas with a description on every field. A
 * RoomEvent is a union discriminated by `event_type`, each member naming the `data` its type
 * carries; the OpenAPI document, the MCP output schemas and the client types are generated from it.
 * The machines that write events (machines/room.machine.ts, machines/decision.machine.ts,
 * src/domain/decision-acts.ts) and these schemas change together: the e2e suites validate every
 * replayed event against them.
 */
import { z } from 'zod';
import { roomSettingsPatchSchema } from '../config.js';

const text = (description: string) => z.string().describe(description);
const count = (description: string) => z.number().int().min(0).describe(description);
const when = (description: string) => z.string().describe(`${description} (RFC 3339, UTC).`);
const decisionSeq = count('The room-local number of the decision concerned.');
const agreement = z
  .literal(true)
  .optional()
  .describe('Present on agreement decisions (one option to accept or reject unanimously).');
const seatRole = z.enum(['participant', 'observer']).describe('The seat role.');

/** Who performed an act; `{participant_id: null, display_name: "operator"}` for the admin token. */
const actorSchema = z
  .object({
    participant_id: z.string().nullable().describe('The acting seat; null for the operator (admin token).'),
    display_name: text('The display name of the actor ("operator" for the admin token).'),
  })
  .meta({ id: 'EventActor', description: 'Who performed an act.' });

const eventFields = {
  id: text('Event id (UUID); a cursor for since_event_id and Last-Event-ID, and the webhook Webhook-Id.'),
  seq: count('Room-local event number, gap-free from 1; a cursor for since_seq.'),
  occurred_at: when('When it happened (for a deadline-driven event, the deadline)'),
};

function roomEvent<T extends string, D extends z.ZodType>(
  id: string,
  type: T,
  described: string,
  data: D,
  decision: 'decision' | 'room' | 'either',
) {
  const decisionId =
    decision === 'decision'
      ? text('The decision the event concerns.')
      : decision === 'room'
        ? z.null().describe('Always null: a room-level event.')
        : z.string().nullable().describe('The decision the message is about; null for a room-scoped message.');
  return z
    .object({
      ...eventFields,
      event_type: z.literal(type).describe(described),
      decision_id: decisionId,
      data,
    })
    .meta({ id, description: `${described} (RoomEvent with event_type ${type}).` });
}

export const participantJoinedEvent = roomEvent(
  'ParticipantJoinedEvent',
  'participant.joined',
  'A seat was created',
  z
    .object({
      participant_id: text('The new seat.'),
      name: text('Its display name.'),
      role: seatRole,
      via: z
        .enum(['create', 'join', 'invite', 'mandate'])
        .describe('How the seat was taken: room creation, an ordinary join, an invite or a mandate join.'),
    })
    .describe('The new seat.'),
  'room',
);

export const participantRoleUpdatedEvent = roomEvent(
  'ParticipantRoleUpdatedEvent',
  'participant.role_updated',
  "A member's role changed",
  z
    .object({ participant_id: text('The seat.'), name: text('Its display name.'), role: seatRole })
    .describe('The seat and its new role.'),
  'room',
);

export const inviteCreatedEvent = roomEvent(
  'InviteCreatedEvent',
  'invite.created',
  'An invite was created',
  z
    .object({
      code: text('The invite code (its public name).'),
      label: text('Who the invite is for.'),
      role: seatRole,
      expected: z.boolean().describe('Whether the room waits for this invitee before an early close.'),
    })
    .describe('The invite (never its secret token).'),
  'room',
);

export const inviteAcceptedEvent = roomEvent(
  'InviteAcceptedEvent',
  'invite.accepted',
  'An invite was redeemed for the first time',
  z
    .object({
      code: text('The invite code.'),
      label: text('Who the invite was for.'),
      participant_id: text('The seat it created.'),
    })
    .describe('The invite and the seat it created.'),
  'room',
);

export const inviteRevokedEvent = roomEvent(
  'InviteRevokedEvent',
  'invite.revoked',
  'An invite was revoked',
  z.object({ code: text('The invite code.'), label: text('Who the invite was for.') }).describe('The invite.'),
  'room',
);

export const roomSettingsUpdatedEvent = roomEvent(
  'RoomSettingsUpdatedEvent',
  'room.settings_updated',
  'A settings patch changed the room config',
  z
    .object({
      changed: z
        .array(roomSettingsPatchSchema.keyof())
        .describe('The RoomConfig keys whose values changed (only mutable keys can change).'),
    })
    .describe('What changed.'),
  'room',
);

export const decisionOpenedEvent = roomEvent(
  'DecisionOpenedEvent',
  'decision.opened',
  'A decision opened (ask, or the first decision at room creation)',
  z
    .object({
      seq: decisionSeq,
      question: text('The question.'),
      options: z.array(z.string()).describe('The options at opening (empty when the slate is to be proposed).'),
      status: z
        .enum(['proposing', 'voting'])
        .describe('proposing: the slate is collecting options; voting: choosing is open.'),
      voting_opens_at: when('When choosing opens, for a slate with a proposal window').optional(),
      voting_ends_at: when('When the voting window closes'),
      opened_by: actorSchema,
      agreement,
    })
    .describe('The decision as opened.'),
  'decision',
);

export const optionProposedEvent = roomEvent(
  'OptionProposedEvent',
  'option.proposed',
  'An option was added to a slate',
  z
    .object({
      seq: decisionSeq,
      option: text('The option text.'),
      number: z.number().int().min(1).describe('Its option number (1-based).'),
      proposed_by: actorSchema,
    })
    .describe('The option.'),
  'decision',
);

export const votingStartedEvent = roomEvent(
  'VotingPhaseStartedEvent',
  'decision.voting_phase_started',
  'A slate opened for choices (the start-choosing act, or the proposal window elapsed)',
  z
    .object({
      seq: decisionSeq,
      options: z.array(z.string()).describe('The frozen slate.'),
      voting_ends_at: when('When the voting window closes'),
      started_by: actorSchema.optional().describe('Who started choosing; absent when the proposal window elapsed.'),
    })
    .describe('The frozen slate.'),
  'decision',
);

export const discussionPostedEvent = roomEvent(
  'DiscussionPostedEvent',
  'discussion.posted',
  'A discussion message was posted',
  z
    .object({
      id: text('Message id.'),
      participant_id: z.string().nullable().describe('The author seat; null for the operator.'),
      display_name: text('The author display name.'),
      body: text('The message.'),
      stance: z
        .enum(['agree', 'disagree', 'clarify', 'extend'])
        .optional()
        .describe('The stance the author attached, if any.'),
      posted_at: when('When it was posted'),
      decision_id: z.string().nullable().describe('The decision it is about; null if room-scoped.'),
      seq: count('The number of the decision it is about, when it is about one.').optional(),
    })
    .describe('The message.'),
  'either',
);

export const voteCastEvent = roomEvent(
  'VoteCastEvent',
  'vote.cast',
  'A choice was made or revised',
  z
    .object({
      seq: decisionSeq,
      participant_id: text('The seat that chose.'),
      display_name: text('Its display name.'),
      option_number: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('For a single-choice ballot: the option number. Absent when the choice is hidden.'),
      choice: text(
        'The ballot as text: the option text, or the JCS JSON text of an array or map ballot. Absent when the choice is hidden.',
      ).optional(),
      revised: z.boolean().describe('Whether this choice replaced an earlier one.'),
      agreement,
      choice_redacted: z
        .literal(true)
        .optional()
        .describe("Present when the room's choice_visibility hides individual choices for now."),
    })
    .describe('The choice (redacted while choices are hidden).'),
  'decision',
);

export const choiceAbstainedEvent = roomEvent(
  'ChoiceAbstainedEvent',
  'choice.abstained',
  'A seat abstained',
  z
    .object({
      seq: decisionSeq,
      participant_id: text('The seat that abstained.'),
      display_name: text('Its display name.'),
      reason: text('The reason given.'),
    })
    .describe('The abstention.'),
  'decision',
);

export const decisionCompletedEvent = roomEvent(
  'DecisionCompletedEvent',
  'decision.completed',
  'A decision sealed (any outcome)',
  z
    .object({
      seq: decisionSeq,
      question: text('The question.'),
      outcome: z
        .enum(['pass', 'plurality_pass', 'no_pass', 'tied'])
        .describe('How the count ended (engine vocabulary).'),
      status: z
        .enum(['completed', 'rejected', 'tied', 'no_quorum'])
        .describe('The receipt status: completed (a winner), rejected, tied or no_quorum.'),
      winner: z.string().nullable().describe('The winning option; null without a winner.'),
      receipt_hash: text('The receipt hash: "sha256:" followed by 64 hex digits.'),
      agreement,
    })
    .describe('The sealed outcome.'),
  'decision',
);

export const roomConcludedEvent = roomEvent(
  'RoomConcludedEvent',
  'room.concluded',
  'The room was closed',
  z
    .object({
      statement: text('The closing statement, if one was given.').optional(),
      concluded_by: text('Who closed it: the agent id of the closing seat, or "operator".'),
      receipt_hash: text('The conclusion receipt hash: "sha256:" followed by 64 hex digits.'),
    })
    .describe('The conclusion.'),
  'room',
);

/** RoomEvent: one entry of the room event log, its `data` typed by `event_type`. */
export const roomEventSchema = z
  .discriminatedUnion('event_type', [
    participantJoinedEvent,
    participantRoleUpdatedEvent,
    inviteCreatedEvent,
    inviteAcceptedEvent,
    inviteRevokedEvent,
    roomSettingsUpdatedEvent,
    decisionOpenedEvent,
    optionProposedEvent,
    votingStartedEvent,
    discussionPostedEvent,
    voteCastEvent,
    choiceAbstainedEvent,
    decisionCompletedEvent,
    roomConcludedEvent,
  ])
  .meta({
    id: 'RoomEvent',
    description:
      'One entry of the room event log: id, seq, event_type, occurred_at, decision_id and the data of its event_type. Hidden choices are redacted (vote.cast carries choice_redacted: true).',
  });

/** The RoomEvent member component names by event_type, for the OpenAPI discriminator mapping. */
export const ROOM_EVENT_COMPONENTS: Readonly<Record<string, string>> = Object.fromEntries(
  roomEventSchema.options.map((option) => [option.shape.event_type.value, z.globalRegistry.get(option)?.id as string]),
);

/** A ballot as stored (docs/mechanisms.md): an option text, a ranking, or a map of option text to score or credits. */
export const canonicalBallotSchema = z
  .union([
    z.string().describe('Single-choice mechanisms: the option text.'),
    z.array(z.string()).describe('approval: the approved options; ranked mechanisms: the ranking, best first.'),
    z
      .record(z.string(), z.number())
      .describe('score_vote: the score of each option; quadratic_vote: the credits on each option.'),
  ])
  .describe('The ballot as recorded, in the canonical form of the room mechanism.');

const scoreMap = (description: string) => z.record(z.string(), z.number()).describe(description);

/** The parameters an engine ran with (src/mechanisms/catalog.ts): options, quorum, then the mechanism's own. */
const engineParametersSchema = z
  .object({
    options: z.array(z.string()).describe('The slate counted.'),
    quorum: z.number().min(0).max(1).describe('The quorum as a fraction of the eligible voters, 0..1.'),
    ballot_mode: z
      .enum(['single_choice', 'approval'])
      .optional()
      .describe('Majority-family engines: single_choice or approval.'),
    pass_threshold: z
      .number()
      .optional()
      .describe('Majority-family engines: the share of the counted votes a winner needs.'),
    pass_threshold_comparison: z
      .enum(['strict', 'inclusive'])
      .optional()
      .describe('Majority-family engines: strict (more than) or inclusive (at least) the threshold.'),
    tie_break: z.enum(['no_pass', 'first_listed', 'random_seeded']).describe('How a tie at the top is resolved.'),
    plurality_fallthrough: z
      .boolean()
      .optional()
      .describe('Majority-family engines: whether the top option wins without reaching the threshold.'),
    min_score: z.number().optional().describe('score_vote: the lowest score.'),
    max_score: z.number().optional().describe('score_vote: the highest score.'),
    credits_per_voter: z.number().optional().describe('quadratic_vote: the credits each voter may spend.'),
  })
  .meta({ id: 'EngineParameters', description: 'The exact parameters the mechanism engine ran with.' });

/** A sealed decision's engine output (src/mechanisms/types.ts, EngineOutput). */
export const mechanismOutputSchema = z
  .object({
    outcome: z.enum(['pass', 'plurality_pass', 'no_pass', 'tied']).describe('How the count ended.'),
    winner: z.string().nullable().describe('The winning option; null without a winner.'),
    per_option_score: scoreMap('Each option and its final count or score.'),
    cast_votes: count('Ballots counted.'),
    eligible_voters: count('The electorate size (or the quorum, if higher).'),
    quorum_met: z.boolean().describe('Whether enough of the electorate responded.'),
    threshold_met: z
      .boolean()
      .optional()
      .describe('Majority-family engines: whether the winner reached the threshold.'),
    trace: z
      .object({
        parameters: engineParametersSchema,
        invalid_votes: count('Ballots the engine could not read.'),
        duplicate_voter_ids: z.array(z.string()).describe('Voters with more than one ballot (the last one counts).'),
        rounds: z
          .array(
            z.object({
              tally: scoreMap('The first-preference count of each remaining option.'),
              remaining: z.array(z.string()).describe('The options still in the count.'),
              eliminated: z.array(z.string()).describe('The options eliminated after this round.'),
              exhausted_ballots: count('Ballots with no remaining option.'),
            }),
          )
          .optional()
          .describe('ranked_choice: each instant-runoff round.'),
        pairwise_preferences: z
          .record(z.string(), scoreMap('Against each other option: how many preferred the row option.'))
          .optional()
          .describe('ranked_pairwise: how many voters preferred each option over each other.'),
        strongest_paths: z
          .record(z.string(), scoreMap('Against each other option: the strongest path strength.'))
          .optional()
          .describe('ranked_pairwise: the Schulze strongest-path strengths.'),
        tied_options: z.array(z.string()).optional().describe('ranked_pairwise: the options tied at the top.'),
        total_weight: z.number().optional().describe('score_vote: the total ballot weight counted.'),
        spent_credits_by_voter: scoreMap('quadratic_vote: the credits each voter spent.').optional(),
        tie_resolution_reason: text('Present when a tie rule decided the outcome: why.').optional(),
      })
      .describe('How the engine counted: its parameters and the mechanism-specific working.'),
  })
  .meta({
    id: 'MechanismOutput',
    description: 'The mechanism engine output of a sealed decision: outcome, winner, scores and the counting trace.',
  });
