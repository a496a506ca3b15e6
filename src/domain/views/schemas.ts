/**
 * The wire shapes of the read views in this folder, as zod schemas with a description on every
 * field: the OpenAPI document's response components and the MCP tools' output schemas are generated
 * from them (docs/architecture.md, One typed contract). A view that grows a field grows it here too;
 * the e2e suites validate every response against the generated document, so a drift fails a test.
 */
import { z } from 'zod';
import { resolvedRoomConfigSchema } from '../config.js';
import { canonicalBallotSchema, mechanismOutputSchema } from './event-schemas.js';

export const text = (description: string) => z.string().describe(description);
export const count = (description: string) => z.number().int().min(0).describe(description);
export const when = (description: string) => z.string().describe(`${description} (RFC 3339, UTC).`);
export const whenOrNull = (description: string) => z.string().nullable().describe(`${description} (RFC 3339, UTC).`);
const hash = (description: string) =>
  z
    .string()
    .nullable()
    .describe(`${description}: "sha256:" followed by 64 hex digits, over the compact JWS bytes; null if none.`);

export const decisionStatusSchema = z
  .enum(['proposing', 'voting', 'expired', 'resolved'])
  .describe(
    'proposing: collecting options; voting: accepting choices; expired: the window has closed and the decision seals at the next touch; resolved: sealed.',
  );

export const roomStatusSchema = z
  .enum(['open', 'proposing', 'voting', 'expired', 'resolved', 'concluded'])
  .describe(
    "The room's phase: open (no decision yet), the oldest open decision's status, resolved (no decision open) or concluded (closed, read-only).",
  );

/** The stances a discussion message may carry (DiscussRequest). */
export const STANCES = ['agree', 'disagree', 'clarify', 'extend'] as const;
const stance = (description: string) => z.enum(STANCES).describe(description);

const ROLES = ['participant', 'observer'] as const;

const outcomeSchema = z
  .enum(['pass', 'plurality_pass', 'no_pass', 'tied'])
  .nullable()
  .describe('How the count ended (engine vocabulary); null until sealed.');

const outcomeStatus = z
  .enum(['completed', 'rejected', 'tied', 'no_quorum'])
  .nullable()
  .describe('The receipt status: completed (a winner), rejected, tied or no_quorum; null until sealed.');

const agreementFlag = z
  .literal(true)
  .optional()
  .describe('Present on agreement decisions (one option to accept or reject unanimously).');

const optionsList = z.array(z.string()).describe('The option texts, in order; option numbers start at 1.');

const eligibleIds = z
  .array(z.string())
  .nullable()
  .describe('The participant ids allowed to choose on this decision; null means the whole room electorate.');

/** The fields that name a decision and its slate (decision-summary.ts, `opening`). */
const openingFields = {
  id: text('Decision id (UUID).'),
  seq: count('Room-local decision number, from 1.'),
  question: text('The question being decided.'),
  context: z.string().nullable().describe('Background the asker gave for the question; null if none.'),
  options: optionsList,
  eligible_participant_ids: eligibleIds,
};

/** DecisionSummary (the decision list, the full state and create-room responses). */
export const decisionSummarySchema = z
  .object({
    ...openingFields,
    opened_at: when('When the decision opened'),
    voting_opens_at: whenOrNull('When choosing opened or opens; null while the slate is collecting without a deadline'),
    voting_ends_at: when('When the voting window closes'),
    status: decisionStatusSchema,
    agreement: agreementFlag,
    proposals_open: z.boolean().describe('Whether options may still be proposed.'),
    resolved_at: whenOrNull('When the decision sealed; null while open'),
    resolved_outcome: outcomeSchema,
    resolved_winner: z.string().nullable().describe('The winning option text; null when open or without a winner.'),
    outcome_status: outcomeStatus,
    prev_hash: hash('The receipt hash this decision chains to'),
    receipt_hash: hash("This decision's receipt hash"),
    option_proposers: z
      .array(z.string().nullable())
      .optional()
      .describe('Full state only: the display name that proposed each option (null for options set by the asker).'),
  })
  .meta({ id: 'DecisionSummary', description: 'One decision with its slate, status, outcome and chain links.' });

const settlingSchema = z
  .object({
    seals_in_seconds: count('Seconds until the decision seals unless a late act changes the winner.'),
    presumptive: z.string().nullable().describe('The winner if nothing changes; null if the outcome has none.'),
  })
  .describe('Present while a determined decision settles before it seals.');

const agentDecisionSchema = z
  .object({
    seq: count('Room-local decision number.'),
    question: text('The question.'),
    context: z.string().nullable().describe('Background for the question; null if none.'),
    options: z.array(z.string()).describe('The options, clipped to 1000 characters each; numbers start at 1.'),
    option_proposers: z
      .array(z.string().nullable())
      .optional()
      .describe('Who proposed each option (display names; null for the asker). Present when anyone proposed.'),
    status: decisionStatusSchema,
    agreement: agreementFlag,
    can_propose_more: z.boolean().optional().describe('Participants only: whether you can propose another option now.'),
    can_start_choosing: z
      .boolean()
      .optional()
      .describe('Participants only: whether you can freeze the slate and open choosing now.'),
    proposals_close_at: z
      .string()
      .optional()
      .describe('While proposing with a deadline: when choosing opens (RFC 3339, UTC).'),
    seconds_until_voting: count('While proposing with a deadline: seconds until choosing opens.').optional(),
    closes_at: when('When the voting window closes'),
    seconds_left: count('Seconds until the voting window closes.'),
    choices_cast: count('Choices counted so far.'),
    eligible_voters: count('How many may choose (the quorum, if higher).'),
    eligible: z
      .array(z.string())
      .nullable()
      .describe('Display names of the participants allowed to choose; null means the whole room electorate.'),
    eligible_participant_ids: eligibleIds,
    settling: settlingSchema.optional(),
  })
  .meta({ id: 'AgentDecision', description: 'An open decision, as the agent view shows the oldest one.' });

const openRowSchema = z
  .object({
    seq: count('Decision number.'),
    question: text('The question, clipped to 200 characters.'),
    status: decisionStatusSchema,
    agreement: agreementFlag,
    options: count('How many options the slate holds.'),
    choices_cast: count('Choices counted so far.'),
    closes_at: when('When the voting window closes'),
    seconds_left: count('Seconds until the voting window closes.'),
    needs_you: z.literal(true).optional().describe('Present when you still owe a choice on this decision.'),
  })
  .meta({ id: 'OpenDecisionRow', description: 'One open decision, in the agent view list of every open decision.' });

const discussionLine = z.object({
  who: text('Display name of the author.'),
  said: text('The message, clipped to 2000 characters.'),
  stance: stance('The stance the author attached, if any.').optional(),
  at: when('When it was posted'),
  decision: count('The decision the message is about, if any.').optional(),
});

/** AgentRoomView (GET /api/rooms/{slug}, the default). */
export const agentRoomViewSchema = z
  .object({
    slug: text('The room slug.'),
    status: roomStatusSchema,
    about: z.string().nullable().describe("The room's standing description; null if none."),
    role: z.enum(['participant', 'observer']).describe('How you read the room: a participant seat, or as an observer.'),
    agent: text('A fixed sentence telling an agent what this room is and how to act in it.'),
    brief: text('One line on what is happening now and what is asked of you.'),
    current_through: count('The last event seq this view includes; pass it as since to read only what changed.'),
    decision: agentDecisionSchema.nullable().describe('The oldest open decision; null when none is open.'),
    decisions_open: z
      .array(openRowSchema)
      .optional()
      .describe('Every open decision, oldest first, when more than one is open.'),
    discussion: z.array(discussionLine).describe('The latest 20 discussion messages, oldest first.'),
    discussion_earlier: count('How many earlier messages are not shown.').optional(),
    roster: z
      .object({
        joined: z
          .array(
            z.object({
              name: text('Display name.'),
              role: z.literal('participant').describe('Always participant (observers are only counted).'),
              room_role: z.literal('non_voting_host').optional().describe('The creator when creator_votes is false.'),
              voting_eligible: z.literal(false).optional().describe('Present (false) for a non-voting host.'),
            }),
          )
          .describe('Participants who hold a seat.'),
        observers: count('How many observers hold a seat, when any do.').optional(),
        expected: z
          .array(
            z.object({
              name: text('The invite label.'),
              role: z.enum(['participant', 'observer']).describe('The role the invite grants.'),
              status: z.enum(['pending', 'accepted', 'revoked', 'expired']).describe('Where the invite stands.'),
            }),
          )
          .describe('Expected invitees (invites marked expected).'),
        waiting_for: z
          .array(z.string())
          .describe(
            'Who the oldest open decision still waits for: electors without a response, pending expected invites.',
          ),
      })
      .describe('Who is in the room and who is awaited.'),
    decided: z
      .array(
        z.object({
          seq: count('Decision number.'),
          question: text('The question.'),
          winner: text('The winning option, when there is one.').optional(),
          outcome: z
            .enum(['completed', 'rejected', 'tied', 'no_quorum'])
            .optional()
            .describe('The receipt status of the sealed decision.'),
          receipt: z.string().nullable().describe('The receipt hash ("sha256:…"); null if none.'),
        }),
      )
      .describe('The latest 5 sealed decisions, in seal order.'),
    decided_earlier: count('How many earlier sealed decisions are not shown.').optional(),
    choices: z
      .array(
        z.object({
          who: text('Display name.'),
          option: z.number().int().nullable().describe('The option number for a single-choice ballot; else null.'),
          choice: text('The ballot as text.'),
          at: when('When it was cast'),
        }),
      )
      .nullable()
      .describe("The oldest open decision's choices, when the room's choice_visibility shows them; else null."),
    abstentions: z
      .array(
        z.object({ who: text('Display name.'), reason: text('The reason given.'), at: when('When it was declared') }),
      )
      .optional()
      .describe('Abstentions on the oldest open decision, when any.'),
    rules: z
      .object({
        how_to_choose: text('How a ballot is written under this room mechanism.'),
        can_propose: z.boolean().optional().describe('Participants only: whether you may propose options.'),
        choices_lock: z
          .enum(['when_determined', 'at_close'])
          .describe('when_determined with early_close, else at_close.'),
        choices_visible: z.enum(['live', 'after_decided', 'never']).describe("The room's choice_visibility."),
      })
      .describe('The rules that shape your next act.'),
    more: z
      .record(z.string(), z.string())
      .describe(
        'Further acts and reads available now, keyed by name (history, config, wait, outcome, ask, …), each a sentence naming the REST route and the MCP tool.',
      ),
  })
  .meta({
    id: 'AgentRoomView',
    description: 'The agent view: a constant-size catch-up keyed by display names, written to be read by an agent.',
  });

const participantRow = z.object({
  id: text('Participant id.'),
  display_name: text('Display name.'),
  role: z.enum(['participant', 'observer']).describe('The seat role.'),
  joined_at: when('When the seat was taken'),
  last_seen_at: whenOrNull('Last read, with read_receipts on; else null'),
  deliberated_at: whenOrNull('Last discussion message; null if none'),
  voted_at: whenOrNull('Last choice; null if none'),
  agent_did: z.string().nullable().describe('The agent DID of a mandate seat; null for token seats.'),
  agent_iss: z.string().nullable().describe('The mandate issuer a mandate seat answers to; null for token seats.'),
  mandate_id: z.string().nullable().describe('The mandate (jti) that took the seat; null for token seats.'),
});

/** RoomInvite (invite list, create invite, full state): never shows the raw invite token. */
export const roomInviteSchema = z
  .object({
    code: text('The invite code: its public name, used to revoke it.'),
    label: text('Who the invite is for, as the operator named them.'),
    role: z.enum(['participant', 'observer']).describe('The role the invite grants.'),
    expected: z.boolean().describe('Whether the room waits for this invitee before an early close.'),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']).describe('Where the invite stands.'),
    binding: z
      .object({
        kind: z
          .enum(['token', 'principal', 'account'])
          .describe('What redeems it: the invite token, a principal or an account.'),
        value: z.string().nullable().describe('The bound principal or account; null for token invites.'),
      })
      .describe('What the invite is bound to.'),
    created_at: when('When the invite was created'),
    expires_at: whenOrNull('When it expires; null if never'),
    accepted_at: whenOrNull('When it was accepted; null if not yet'),
    accepted_participant_id: z.string().nullable().describe('The seat that accepted it; null if not yet.'),
    revoked_at: whenOrNull('When it was revoked; null if not'),
  })
  .meta({ id: 'RoomInvite', description: 'An invite to a room (its secret token is shown only once, at creation).' });

/** RoomState (GET /api/rooms/{slug}?include=full). */
export const roomStateSchema = z
  .object({
    slug: text('The room slug.'),
    about: z.string().nullable().describe("The room's standing description; null if none."),
    status: roomStatusSchema,
    config: resolvedRoomConfigSchema.describe('The resolved room config: every key present.'),
    question: z
      .string()
      .nullable()
      .describe('The active decision question (oldest open, else latest sealed); null if none.'),
    context: z.string().nullable().describe("The active decision's context; null if none."),
    options: z.array(z.string()).describe("The active decision's options; empty if none."),
    voting_ends_at: whenOrNull("When the active decision's window closes; null if none"),
    resolved_at: whenOrNull('When the active decision sealed; null if open or none'),
    resolved_outcome: outcomeSchema,
    resolved_winner: z.string().nullable().describe("The active decision's winner; null if none."),
    resolution_payload: mechanismOutputSchema
      .nullable()
      .describe("The latest sealed decision's mechanism output (tallies, rounds, …, by mechanism); null if none."),
    created_at: when('When the room was created'),
    participant_count: count('Seats held (participants and observers).'),
    eligible_voters: count('How many may choose on the active decision; 0 if none.'),
    vote_count: count('Choices counted on the active decision; 0 if none.'),
    active_decision_id: z.string().nullable().describe('The active decision id; null if none.'),
    concluded_at: whenOrNull('When the room was closed; null while open'),
    closing_statement: z.string().nullable().describe('The statement the room was closed with; null if none.'),
    decisions: z.array(decisionSummarySchema).describe('Every decision, in seq order.'),
    participants: z.array(participantRow).describe('Every seat, in join order.'),
    invites: z.array(roomInviteSchema).describe('The invites, for readers holding the invite authority; else empty.'),
    discussion: z
      .array(
        z.object({
          id: text('Message id.'),
          participant_id: z.string().nullable().describe('The author seat; null for the operator.'),
          body: text('The message.'),
          stance: z.enum(STANCES).nullable().describe('The stance attached; null if none.'),
          posted_at: when('When it was posted'),
          decision_id: z.string().nullable().describe('The decision it is about; null if room-scoped.'),
        }),
      )
      .describe('Every discussion message, oldest first.'),
    votes_visible_during: z.enum(['live', 'after_decided', 'never']).describe("The room's choice_visibility."),
    votes: z
      .array(
        z.object({
          participant_id: text('The seat that chose.'),
          choice: canonicalBallotSchema,
          cast_at: when('When it was cast'),
          rationale: z.string().nullable().describe('The reason given; null if none.'),
        }),
      )
      .nullable()
      .describe("The active decision's ballots when choice_visibility shows them; else null."),
    abstentions: z
      .array(
        z.object({
          participant_id: text('The seat that abstained.'),
          reason: text('The reason given.'),
          declared_at: when('When it was declared'),
        }),
      )
      .describe("The active decision's abstentions."),
    current_through: count('The last event seq this state includes.'),
  })
  .meta({ id: 'RoomState', description: 'The complete state of a room (include=full).' });

const deltaEntrySchema = z
  .object({
    seq: count('Event seq.'),
    at: when('When it happened'),
    decision: count('The decision it concerns, if any.').optional(),
    type: z
      .enum([
        'discussion',
        'option_proposed',
        'decision_opened',
        'choosing_started',
        'choice_submitted',
        'abstained',
        'decision_resolved',
        'joined',
        'role_updated',
        'invite_created',
        'room_concluded',
      ])
      .describe('What happened.'),
    who: z.string().nullable().optional().describe('Display name of the actor, where there is one.'),
    said: text('discussion: the message, clipped to 2000 characters.').optional(),
    stance: stance('discussion: the stance attached.').optional(),
    option: z
      .union([z.string(), z.number().int()])
      .optional()
      .describe('option_proposed: the option text; choice_submitted: the option number of a single-choice ballot.'),
    question: text('decision_opened, choosing_started, decision_resolved: the question.').optional(),
    choice: z
      .string()
      .optional()
      .describe(
        'choice_submitted: the ballot as JCS JSON text (array and map ballots), when visible and not a single option.',
      ),
    revised: z.literal(true).optional().describe('choice_submitted: present when the choice replaced an earlier one.'),
    reason: text('abstained: the reason.').optional(),
    outcome: z
      .enum(['completed', 'rejected', 'tied', 'no_quorum'])
      .optional()
      .describe('decision_resolved: the receipt status: completed (a winner), rejected, tied or no_quorum.'),
    winner: z.string().nullable().optional().describe('decision_resolved: the winner; null if none.'),
    role: z.enum(ROLES).optional().describe('joined, role_updated, invite_created: the role.'),
    name: text('invite_created: the invite label.').optional(),
    closing_statement: text('room_concluded: the closing statement, if one was given.').optional(),
    agreement: agreementFlag,
  })
  .meta({ id: 'DeltaEntry', description: 'One line of a delta: an event, keyed by display names.' });

/** RoomDelta (GET /api/rooms/{slug}?since=N). */
export const roomDeltaSchema = z
  .object({
    slug: text('The room slug.'),
    status: roomStatusSchema,
    agent: text('A fixed sentence telling an agent what this room is and how to act in it.'),
    state: text('One line on where the room stands.'),
    new: z.array(deltaEntrySchema).describe('What happened after since, oldest first, at most 200 entries.'),
    current_through: count('The cursor for the next delta: the last event seq included.'),
    your_status: text('Present when you owe a choice: which decisions.').optional(),
    role: z.literal('observer').optional().describe('Present when you read as an observer.'),
    more: z
      .object({ wait: text('How to wait for what needs you.'), full: text('How to re-read the whole room.') })
      .describe('Where to go next.'),
  })
  .meta({ id: 'RoomDelta', description: 'What changed in a room after event seq since.' });

/**
 * Where a receipt is in the service's transparency log (docs/transparency-log.md): present once the
 * receipt is sequenced and covered by a published checkpoint.
 */
/** A position label of the transparency log with its VRF proof (docs/transparency-log.md, Position keys). */
const provenLabelSchema = z
  .object({
    key_id: text(
      "The position key's id (8 lowercase hex), as the leaf and discovery's audit_log.position_keys carry it.",
    ),
    label: text('The position label, base64: the first 32 bytes of the VRF output.'),
    proof: text('The ECVRF-EDWARDS25519-SHA512-TAI proof of the label, base64url (80 bytes).'),
  })
  .describe('A position label and its VRF proof.');

const logInclusionSchema = z
  .object({
    index: count("The receipt's leaf index in the log (0-based)."),
    tree_size: count('The size of the checkpoint the proof is against.'),
    checkpoint: text('That checkpoint: a C2SP signed note (origin, size, base64 root hash, signatures).'),
    inclusion_proof: z
      .array(z.string())
      .describe(
        'The RFC 6962 inclusion proof of the leaf against that checkpoint: base64 SHA-256 hashes, leaf side first.',
      ),
    position: provenLabelSchema.describe(
      "The leaf's position label and its VRF proof: rebuild the commitment leaf from the receipt JWS and check the proof against discovery's position key.",
    ),
  })
  .optional()
  .describe('Where this receipt is in the transparency log, with its inclusion proof; absent until it is logged.');

const outcomeRowSchema = z
  .object({
    id: text('Decision id.'),
    seq: count('Decision number.'),
    question: text('The question.'),
    options: optionsList,
    status: decisionStatusSchema,
    agreement: agreementFlag,
    opened_at: when('When the decision opened'),
    voting_opens_at: whenOrNull('When choosing opened; null while collecting without a deadline'),
    voting_ends_at: when('When the voting window closes'),
    resolved_at: whenOrNull('When it sealed; null while open'),
    resolved_outcome: outcomeSchema,
    resolved_winner: z.string().nullable().describe('The winner; null if open or none.'),
    outcome_status: outcomeStatus,
    prev_hash: hash('The receipt hash this decision chains to'),
    receipt_hash: hash("This decision's receipt hash"),
    receipt_jws: z
      .string()
      .nullable()
      .describe('The signed receipt, a compact JWS (EdDSA, typ svc-receipt+jwt); null while open.'),
    transparency_log: logInclusionSchema,
  })
  .meta({
    id: 'OutcomeDecision',
    description: 'A decision in the outcome: its slate, how it sealed and its signed receipt.',
  });

/** OutcomeResponse (GET /api/rooms/{slug}/outcome). */
export const outcomeResponseSchema = z
  .object({
    slug: text('The room slug.'),
    status: roomStatusSchema,
    about: z.string().nullable().describe("The room's standing description; null if none."),
    question: z.string().nullable().describe('The latest sealed question; null if none.'),
    resolved_outcome: outcomeSchema,
    resolved_winner: z.string().nullable().describe('The latest sealed winner; null if none.'),
    resolved_at: whenOrNull('When the latest decision sealed; null if none'),
    receipt_hash: hash("The latest sealed decision's receipt hash"),
    prev_hash: hash('The hash the latest receipt chains to'),
    receipt_jws: z.string().nullable().describe("The latest sealed decision's receipt (compact JWS); null if none."),
    decisions: z.array(outcomeRowSchema).describe('Every decision: sealed ones in seal order, then open ones.'),
    conclusion: z
      .object({
        concluded_at: when('When the room was closed'),
        closing_statement: z.string().nullable().describe('The closing statement; null if none.'),
        concluded_by: z.string().nullable().describe('The seat that closed the room; null for the operator.'),
        prev_hash: hash('The receipt hash the conclusion chains to'),
        receipt_hash: hash("The conclusion receipt's hash"),
        receipt_jws: z.string().nullable().describe('The conclusion receipt (compact JWS).'),
        transparency_log: logInclusionSchema,
      })
      .nullable()
      .describe('The conclusion receipt once the room is closed; else null.'),
    log_proofs_pending: z
      .object({
        receipts: count('How many receipts of this outcome have no transparency_log proof yet.'),
        retry_after_seconds: count('Read the outcome again after this many seconds for their proofs.'),
        hint: text('What to do, in words.'),
      })
      .optional()
      .describe(
        'Present while some receipts of this outcome are not in the transparency log yet (right after a seal): when to read again for their transparency_log proofs. The receipts are final and verify without it.',
      ),
    verification: z
      .object({
        jwks_url: text('Where the signing keys are published.'),
        alg: z.literal('EdDSA').describe('The signature algorithm.'),
        typ: z.literal('svc-receipt+jwt').describe('The JWS typ header of receipts.'),
        hash: text('How receipt hashes are computed.'),
      })
      .describe('How to verify the receipts.'),
  })
  .meta({
    id: 'OutcomeResponse',
    description: 'Every decision with its outcome and signed receipt, chained by hash, and how to verify them.',
  });

const decisionCardSchema = z
  .object({
    id: text('Decision id.'),
    seq: count('Decision number.'),
    question: text('The question.'),
    options: optionsList,
    voting_ends_at: when('When the voting window closes'),
    status: decisionStatusSchema,
    agreement: agreementFlag,
    resolved_outcome: outcomeSchema.optional(),
    resolved_winner: z.string().nullable().optional().describe('Resolved decisions: the winner; null if none.'),
    receipt_hash: hash('Resolved decisions: the receipt hash').optional(),
  })
  .meta({
    id: 'WaitDecision',
    description: 'A decision as a wait reports it: the one that needs you, or that sealed.',
  });

const waitFor = z.enum(['my_choice', 'completion', 'activity']).describe('What the wait was for.');

/** AwaitNextActionResponse (GET /api/rooms/{slug}/next-action): one variant per status (wait-response.ts). */
export const awaitNextActionSchema = z
  .discriminatedUnion('status', [
    z
      .object({
        status: z.literal('actionable').describe('A decision needs your choice, or one you waited on sealed.'),
        for: waitFor,
        decision: decisionCardSchema.describe('The decision that needs you or sealed.'),
        also_actionable: z
          .array(decisionCardSchema)
          .optional()
          .describe('Further decisions that need your choice, when more than one does.'),
      })
      .describe('actionable: a decision needs you (or sealed).'),
    z
      .object({
        status: z.literal('activity').describe('Someone else acted.'),
        for: z.literal('activity').describe('What the wait was for: only for=activity wakes on activity.'),
        event: z
          .object({
            seq: count('Event seq; pass it as since to read the change.'),
            type: text('What happened (delta vocabulary).'),
            who: z.string().nullable().describe('Who acted, if known.'),
          })
          .describe('The first event by someone else.'),
      })
      .describe('activity: someone else acted.'),
    z
      .object({
        status: z.literal('timeout').describe('Nothing yet: call again.'),
        for: waitFor,
        next_poll_at: when('When to call again'),
        hint: text('What to do next.'),
      })
      .describe('timeout: nothing yet, call again.'),
  ])
  .meta({
    id: 'AwaitNextActionResponse',
    description:
      'The answer to a wait, by status: actionable (a decision needs you, or sealed), activity (someone else acted), or timeout (a normal answer: call again).',
  });

/** The decision object of ask responses. */
export const askDecisionSchema = z
  .object({
    ...openingFields,
    voting_opens_at: whenOrNull('When choosing opens; null while collecting without a deadline'),
    voting_ends_at: when('When the voting window closes'),
    prev_hash: hash('The receipt hash the decision will chain to (the room chain head now)'),
    status: z.enum(['proposing', 'voting']).describe('proposing: collecting a slate; voting: choosing is open.'),
    agreement: agreementFlag,
  })
  .meta({ id: 'AskDecision', description: 'A decision just opened.' });

/** The decision object of start-choosing responses. */
export const startedDecisionSchema = z
  .object({
    id: text('Decision id (UUID).'),
    seq: count('Room-local decision number.'),
    options: optionsList,
    voting_opens_at: whenOrNull('When choosing opened'),
    voting_ends_at: when('When the voting window closes'),
    status: z.literal('voting').describe('Choosing is open.'),
  })
  .describe('The decision now open for choices.');

/** LogPositionsResponse (GET /api/rooms/{slug}/log-positions; docs/transparency-log.md, The member endpoint). */
export const logPositionsResponseSchema = z
  .object({
    room_id: text("The room's URL, as its receipts sign it in svc.room_id."),
    log_origin: text('The origin line of the live transparency log the labels are for.'),
    positions: z
      .array(
        z
          .object({
            sequence: z.number().int().min(1).describe("The position in the room's receipt chain."),
            receipt_hash: hash('The receipt at this position'),
            leaf_index: z
              .number()
              .int()
              .min(0)
              .nullable()
              .describe('Its leaf index in the log; null until it is sequenced and published.'),
            labels: z
              .array(provenLabelSchema)
              .describe("The position's label under every position key the service holds, each with its VRF proof."),
          })
          .describe("One position of the room's chain."),
      )
      .describe(
        "Positions 1 to n (the room's receipts), then n + 1, not yet used: a leaf found under its label is a receipt the reader was never shown.",
      ),
  })
  .meta({
    id: 'LogPositionsResponse',
    description: "Where the room's receipts are in the transparency log, and the VRF labels that find them.",
  });
