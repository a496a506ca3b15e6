/** POST /api/rooms — create a room; the caller becomes the creator (docs/concepts.md, Rooms). */
import { randomInt, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RoomCommand } from '../../machines/room.events.js';
import type { RoomInput } from '../../machines/room.machine.js';
import { limitRoomCreation } from '../auth/creation-limit.js';
import { hashPassword, hashSecret, randomToken } from '../auth/secrets.js';
import {
  parsePartialConfig,
  resolveConfig,
  resolvedRoomConfigSchema,
  roomConfigSchema,
  slateTextError,
  TEXT_LIMITS,
} from '../domain/config.js';
import { duplicateOptions } from '../domain/shown-text.js';
import type { Actor } from '../domain/types.js';
import { iso } from '../domain/format.js';
import { decisionSummary } from '../domain/views/decision-summary.js';
import { decisionSummarySchema } from '../domain/views/schemas.js';
import { invalidInput } from '../errors.js';
import { roomUrl } from '../runtime/sealing.js';
import { linkSeat } from './list-rooms.js';
import { checkedLater } from './json-schema.js';
import { idempotencyFor } from './shared.js';
import type { OperationDef } from './types.js';

const SLUG_ALPHABET = 'abcdefghjkmnpqrstvwxyz23456789';

export const createRoomInput = z
  .object({
    question: z
      .string()
      .min(3)
      .max(TEXT_LIMITS.question)
      .optional()
      .describe('The question of the first decision (3 to 500 characters). Send a question, an about text, or both.'),
    about: z
      .string()
      .max(TEXT_LIMITS.about)
      .nullable()
      .optional()
      .describe(
        "The room's standing description (at most 100 000 characters); a room without a question starts from it.",
      ),
    context: z
      .string()
      .max(TEXT_LIMITS.context)
      .nullable()
      .optional()
      .describe('Background for the first question (needs question; at most 100 000 characters).'),
    options: z
      .array(z.string().min(1).max(TEXT_LIMITS.option))
      .max(500)
      .optional()
      .describe(
        "The first decision's options (at most config.max_options, distinct, non-empty; 500 000 characters together). Omit to collect them by proposals.",
      ),
    config: checkedLater(
      z.unknown().describe('Room settings; omitted keys take their defaults, unknown keys are refused.'),
      roomConfigSchema,
    ).optional(),
    password: z
      .string()
      .min(12)
      .max(1024)
      .optional()
      .describe(
        'A room password (12 to 1024 characters): makes the room private unless config.visibility says otherwise, and lets holders read it or join.',
      ),
    defer_first_decision: z
      .boolean()
      .optional()
      .describe(
        'true creates the room without opening the question as a decision yet (the question becomes the about text).',
      ),
    display_name: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('The creator seat\'s display name (1 to 100 characters); default "creator".'),
  })
  .meta({
    id: 'CreateRoomRequest',
    description: 'A new room, around a question or an about text (at least one of the two).',
    // What checkCreateFields refuses, stated in the schema: no question and no (non-null) about text.
    // Inside allOf, so generators intersect it with the properties rather than offer it as an alternative.
    allOf: [
      {
        anyOf: [
          {
            type: 'object',
            required: ['question'],
            properties: { question: { type: 'string', description: 'A question opens the first decision.' } },
          },
          {
            type: 'object',
            required: ['about'],
            properties: { about: { type: 'string', description: 'Without a question, the about text is required.' } },
          },
        ],
      },
    ],
  });

export const createRoomOutput = z
  .object({
    slug: z.string().describe('The room slug: share it with those who should join.'),
    url: z.string().describe('The room URL.'),
    creator_token: z
      .string()
      .describe(
        "Shown only now: the creator seat's participant token and the room's operator credential. Send it as the token argument (MCP) or Authorization: Bearer (REST).",
      ),
    participant_id: z.string().describe("The creator seat's participant id."),
    about: z.string().nullable().describe("The room's standing description; null if none."),
    voting_ends_at: z
      .string()
      .nullable()
      .describe("When the first decision's window closes (RFC 3339, UTC); null without a first decision."),
    expires_at: z.null().describe('Always null: rooms do not expire.'),
    owner_principal_id: z.string().nullable().describe('The agent DID of a mandate creator; null for token creators.'),
    config: resolvedRoomConfigSchema.describe('The resolved room config: every key present.'),
    decision: decisionSummarySchema.nullable().describe('The first decision; null when none was opened.'),
  })
  .meta({ id: 'CreateRoomResponse', description: 'The new room and its one-time creator token.' });

export function newSlug(): string {
  let slug = '';
  for (let i = 0; i < 10; i++) slug += SLUG_ALPHABET[randomInt(SLUG_ALPHABET.length)];
  return slug;
}

type CreateInput = z.infer<typeof createRoomInput>;

function checkCreateFields(
  input: CreateInput,
  visibility: string | undefined,
  proposalNone: boolean,
  maxOptions: number,
) {
  const route = 'POST /api/rooms';
  if (input.question === undefined && (input.about === undefined || input.about === null)) {
    throw invalidInput(
      'question',
      `Send a question (opens the first decision) or an about text (room-first), or both (${route}).`,
      'invalid_value',
    );
  }
  if (input.context != null && input.question === undefined) {
    throw invalidInput(
      'context',
      `context frames the first decision and needs a question (${route}).`,
      'invalid_value',
    );
  }
  const options = input.options ?? [];
  if (options.some((o) => o.trim().length === 0)) {
    throw invalidInput('options', `Options must not be empty or whitespace-only (${route}).`, 'invalid_value');
  }
  const dup = duplicateOptions(options, route);
  if (dup) throw dup;
  const slateError = slateTextError(options, 'options', route);
  if (slateError) throw slateError;
  const opensDecision = input.question !== undefined && input.defer_first_decision !== true;
  if (!opensDecision && options.length > 0) {
    throw invalidInput(
      'options',
      `options belong to a first decision; send a question (without defer_first_decision) or drop options (${route}).`,
      'invalid_value',
    );
  }
  if (opensDecision) {
    const min = proposalNone ? 2 : 0;
    if (options.length < min || options.length > maxOptions) {
      throw invalidInput(
        'options',
        `The first decision needs ${min}..${maxOptions} options in this room${proposalNone ? ' because nobody may propose options later' : ''} (${route}).`,
        'out_of_range',
      );
    }
  }
  if (input.password !== undefined && visibility !== undefined && visibility !== 'private') {
    throw invalidInput(
      'password',
      `A password makes a room private; it cannot be combined with visibility "${visibility}" (${route}).`,
      'invalid_value',
    );
  }
}

export const createRoom = {
  name: 'createRoom',
  summary: 'Create a room',
  description:
    "Creates a room around a question (the first decision opens at once) or an about text (room-first). The caller becomes the creator: the response carries the one-time creator_token, which is both the creator seat's participant token and the room's operator credential.",
  tag: 'rooms',
  method: 'POST',
  path: '/api/rooms',
  inputSource: 'body',
  input: createRoomInput,
  output: createRoomOutput,
  requestSchemaName: 'CreateRoomRequest',
  example: {
    input: {
      question: 'Which region do we deploy to first?',
      options: ['eu-west', 'us-east'],
      config: { mechanism: 'simple_majority', voting_window: 3600 },
      display_name: 'release-host',
    },
  },
  responseSchemaName: 'CreateRoomResponse',
  mutating: true,
  shownText: {
    question: 'line',
    about: 'paragraphs',
    context: 'paragraphs',
    options: 'line',
    display_name: 'creator_name',
  },
  mcp: { tool: 'create_room', catalogs: ['host'] },
  async handle(ctx, input) {
    // A mandate makes its subject the owner and binds the creator seat to it (docs/concepts.md, Mandates: no room scope check).
    const mandate = ctx.credentials.verified ?? null;
    const partial = parsePartialConfig(input.config);
    if (input.password !== undefined && partial.visibility === undefined) partial.visibility = 'private';
    const config = resolveConfig(partial);
    checkCreateFields(
      input,
      (input.config as { visibility?: string } | undefined)?.visibility,
      config.option_proposal_authority.kind === 'none',
      config.max_options,
    );

    const { services } = ctx;
    const now = services.clock.now();
    // Counted once the request is known to be valid, before any work is spent on the room.
    await limitRoomCreation(services.requestRates, ctx.clientIp, now);
    let slug = newSlug();
    while (!(await services.store.reserveSlug(slug))) slug = newSlug();
    const creatorToken = randomToken('t_');
    const creatorId = randomUUID();
    const opensDecision = input.question !== undefined && input.defer_first_decision !== true;
    const about =
      input.defer_first_decision === true && input.question !== undefined
        ? (input.about ?? input.question)
        : (input.about ?? null);

    const roomInput: RoomInput = {
      slug,
      createdAt: now,
      about,
      config,
      passwordHash: input.password !== undefined ? await hashPassword(input.password, ctx.clientIp) : null,
      ownerPrincipalId: mandate?.sub ?? null,
    };
    const displayName = input.display_name ?? 'creator';
    const creator: Actor = {
      participantId: creatorId,
      displayName,
      agentId: mandate?.sub ?? `participant:${creatorId}`,
      mandateRef: mandate?.jti ?? null,
      agentIss: mandate?.issuerPrincipal ?? null,
      isOperator: true,
      isAdmin: false,
    };
    const commands: RoomCommand[] = [
      {
        type: 'JOIN',
        now,
        seat: {
          id: creatorId,
          tokenHash: hashSecret(creatorToken),
          displayName,
          role: 'participant',
          via: 'create',
          agentDid: mandate?.sub ?? null,
          agentIss: mandate?.issuerPrincipal ?? null,
          mandateId: mandate?.jti ?? null,
        },
        admission: { passwordGiven: false, passwordOk: false },
      },
    ];
    if (opensDecision) {
      commands.push({
        type: 'ASK',
        now,
        actor: creator,
        decisionId: randomUUID(),
        input: { question: input.question!, context: input.context ?? null, options: input.options ?? [] },
        atCreation: true,
      });
    }
    const idempotency = idempotencyFor(ctx, null);
    const turn = await services.registry.create(
      roomInput,
      commands,
      (_infos, state) => {
        const first = state.decisions[0];
        return {
          slug,
          url: roomUrl(services.baseUrl, slug),
          creator_token: creatorToken,
          participant_id: creatorId,
          about,
          voting_ends_at: iso(first?.data.votingEndsAt),
          expires_at: null,
          owner_principal_id: mandate?.sub ?? null,
          config,
          decision: first ? decisionSummary(state, first, now) : null,
        };
      },
      idempotency,
    );
    ctx.replayed = turn.replayed;
    if (!turn.replayed) await linkSeat(ctx, slug, creatorToken);
    return turn.result;
  },
} satisfies OperationDef<CreateInput>;
