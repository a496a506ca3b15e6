/** POST and GET /api/rooms/{slug}/choose — submit or revise a choice (docs/concepts.md, Decisions and slates). */
import { z } from 'zod';
import { parseMandate } from '../auth/mandate-claims.js';
import { isSingleChoice } from '../domain/ballots.js';
import type { RoomState } from '../domain/state.js';
import { invalidInput } from '../errors.js';
import { checkedLater } from './json-schema.js';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef, RequestContext } from './types.js';

const LISTED_RULE =
  'Your ballot; its shape follows the room mechanism. simple_majority, supermajority, plurality (and agreement decisions): one option, as its number (5, "5" or "#5") or its exact text. approval: an array of the options you approve. ranked_choice, ranked_pairwise: an array of options, most preferred first.';
const CHOICE_RULE = `${LISTED_RULE} score_vote: an object mapping options to scores. quadratic_vote: an object mapping options to credits. Options are referenced by number or exact text.`;

const OPTION_BY_TEXT = 'An option by its number ("5", "#5") or exact text.';
const OPTION_BY_NUMBER = 'An option by number (from 1).';
const optionRef = () =>
  z.union([z.string().describe(OPTION_BY_TEXT), z.number().int().min(1).describe(OPTION_BY_NUMBER)]);

/** The forms of choice that every tool-calling framework can declare: one option, or a list of them. */
const listedChoice = [
  z.string().describe('One option: its number ("5", "#5") or exact text.'),
  z.number().int().min(1).describe('One option, by number (from 1).'),
  z
    .array(optionRef())
    .min(1)
    .describe(
      'Several options (approval), or options in preference order, best first, without repeats (ranked_choice, ranked_pairwise): each by number or exact text.',
    ),
] as const;

const pointsMap = z
  .record(z.string(), z.number().min(0))
  .describe(
    'Options (by number or exact text) mapped to scores from 0 to 5, at least one above 0 (score_vote), or to whole credits, 1 to 9 in total (quadratic_vote).',
  );

/** Parsed loosely: the mechanism decides the shape, and the ballot check words the refusal (reason ballot_shape). */
const choiceSchema = checkedLater(z.unknown().optional().describe(CHOICE_RULE), z.union([...listedChoice, pointsMap]));

/**
 * choice as the MCP tool declares it (docs/agents.md, One ballot, every framework): without the
 * option→points map, whose open object LangChain's adapter and OpenAI's strict mode cannot carry;
 * score and quadratic ballots have `scores` there. The service still takes the map in choice.
 */
export const DECLARED_TOOL_CHOICE = z
  .union(listedChoice)
  .describe(
    `${LISTED_RULE} score_vote, quadratic_vote: send scores instead (choice also takes them as an object mapping options to points). Options are referenced by number or exact text.`,
  );

const scoresSchema = z
  .array(
    z
      .strictObject({
        option: optionRef().describe('The option: its number (5, "5" or "#5") or exact text.'),
        points: z
          .number()
          .min(0)
          .describe('Its score from 0 to 5 (score_vote) or its whole credits (quadratic_vote, 1 to 9 in total).'),
      })
      .meta({ id: 'ScoreEntry', description: 'One option of a score or quadratic ballot, and its points.' }),
  )
  .min(1)
  .optional()
  .describe(
    'A score_vote or quadratic_vote ballot as a list, each option at most once: [{"option": 1, "points": 5}, {"option": "beta", "points": 2}] is the choice {"1": 5, "beta": 2}. Send scores or choice, not both.',
  );

const castChoice = z
  .union([z.string(), z.array(z.string()), z.record(z.string(), z.number())])
  .describe('The ballot as recorded: option texts in canonical form.');

const chooseInput = z
  .object({
    slug: slugSchema,
    choice: choiceSchema,
    scores: scoresSchema,
    reason: z.string().max(2000).optional().describe('Why you chose this, shown to others (at most 2000 characters).'),
    rationale: z.string().max(2000).optional().describe('Another name for reason; send one of the two.'),
    decision: seqSelector.optional(),
  })
  .meta({
    id: 'ChooseRequest',
    description: 'A ballot, or a revision of yours: choice, or scores for a score or quadratic ballot.',
    // What runChoose refuses, stated in the schema: neither choice nor scores. Inside allOf, as
    // CreateRoomRequest's, so generators intersect it with the properties.
    allOf: [
      {
        anyOf: [
          {
            type: 'object',
            required: ['choice'],
            properties: { choice: { description: 'Required unless scores is sent.' } },
          },
          {
            type: 'object',
            required: ['scores'],
            properties: { scores: { description: 'Required unless choice is sent.' } },
          },
        ],
      },
    ],
  });

type ChooseInput = z.infer<typeof chooseInput>;

/**
 * The ballot a call carries: choice as sent, or the scores list as the option→points map it stands
 * for (docs/agents.md, One ballot, every framework). A list that names an option twice, or both
 * fields at once, is refused rather than merged.
 */
function ballotOf(input: Partial<Pick<ChooseInput, 'choice' | 'scores'>>): { choice: unknown; problem?: Error } {
  const { choice, scores } = input;
  if (scores === undefined) return { choice };
  if (choice !== undefined) {
    return {
      choice,
      problem: invalidInput('scores', 'Send the ballot once: choice or scores, not both.', 'ballot_shape'),
    };
  }
  const points: Record<string, number> = {};
  for (const { option, points: value } of scores) {
    const key = String(option);
    if (key in points) {
      return {
        choice: undefined,
        problem: invalidInput(
          'scores',
          `scores lists the option ${JSON.stringify(option)} twice; give each option one entry.`,
          'ballot_shape',
        ),
      };
    }
    points[key] = value;
  }
  return { choice: points };
}

const chooseOutput = z
  .object({
    ok: z.literal(true).describe('Always true on success.'),
    slug: z.string().describe('The room slug.'),
    decision: z.number().int().describe('The decision number the ballot was cast on.'),
    cast_choice: castChoice,
    revised: z.boolean().describe('True when this replaced an earlier ballot of yours.'),
    status: z.enum(['voting', 'resolved']).describe('resolved when this ballot sealed the decision.'),
    resolved_winner: z.string().nullable().describe('The winner, when this ballot sealed the decision; else null.'),
    resolved_outcome: z
      .enum(['pass', 'plurality_pass', 'no_pass', 'tied'])
      .nullable()
      .describe('How the count ended, when this ballot sealed the decision; else null.'),
    agreement: z.literal(true).optional().describe('Present on agreement decisions.'),
    settling: z
      .object({
        seals_in_seconds: z
          .number()
          .describe('Seconds until the decision seals unless a later act changes the winner.'),
        presumptive: z.string().nullable().describe('The winner if nothing changes; null if none.'),
      })
      .optional()
      .describe('Present when the decision is determined and settling before it seals.'),
  })
  .meta({ id: 'ChooseResponse', description: 'Your ballot as recorded and where the decision stands.' });

async function runChoose(ctx: RequestContext, input: ChooseInput, invalid: Error | undefined, viaGet: boolean) {
  const route = `${viaGet ? 'GET' : 'POST'} /api/rooms/${input.slug}/choose`;
  const ballot = ballotOf(input);
  let problem = invalid ?? ballot.problem;
  if (!problem && input.reason !== undefined && input.rationale !== undefined && input.reason !== input.rationale) {
    problem = invalidInput(
      'reason',
      `reason and rationale are the same field; send one of them (${route}).`,
      'invalid_value',
    );
  }
  if (!problem && ballot.choice === undefined) {
    problem = invalidInput(
      'choice',
      `choice is required: the option number or exact text, or scores for a score or quadratic ballot (${route}).`,
      'ballot_shape',
    );
  }
  return act(ctx, input.slug, {
    action: 'choose',
    route,
    build: (state, actor, now) => {
      if (!problem && viaGet && !isSingleChoice(state.room.config.mechanism, false)) {
        problem = invalidInput(
          'choice',
          `GET choose accepts single-choice ballots only; this room uses ${state.room.config.mechanism}: send POST ${route.slice(4)} with a JSON body instead.`,
          'ballot_shape',
        );
      }
      return {
        type: 'CHOOSE',
        now,
        actor,
        choice: ballot.choice,
        reason: input.reason ?? input.rationale ?? null,
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(problem ? { invalid: (problem as import('../errors.js').ProtocolError).toSpec() } : {}),
      };
    },
    render: (info, state, now) => {
      const d = state.decisions.find((x) => x.data.id === info.decision_id)!;
      const sealed = d.data.seal;
      const status = sealed ? 'resolved' : 'voting';
      return {
        ok: true,
        slug: state.slug,
        decision: d.data.seq,
        cast_choice: info.cast_choice,
        revised: info.revised as boolean,
        status,
        resolved_winner: sealed?.winner ?? null,
        resolved_outcome: sealed?.outcome ?? null,
        ...(d.data.agreement ? { agreement: true } : {}),
        ...(d.phase === 'settling' && d.data.settling
          ? {
              settling: {
                seals_in_seconds: Math.max(0, Math.ceil((d.data.settling.endsAt - now) / 1000)),
                presumptive: d.data.settling.presumptive,
              },
            }
          : {}),
      };
    },
  });
}

/**
 * The mandate is checked against its weight_cap before the read wall (docs/architecture.md, Errors), and
 * a quadratic weight is the room's mechanism speaking: in a room it may not read, a mandate whose
 * subject holds no seat weighs 1, as in any other room, so its refusal is the wall's and says nothing
 * of the mechanism. Every seat a mandate can reach has the mandate's subject (auth/seat-binding.ts),
 * so a seated mandate is still held to its cap; the claims are read unverified, verification follows.
 */
function weighsBehindWall(state: RoomState, mandate: string | undefined, selfIssuer: string): boolean {
  if (state.room.config.visibility === 'public' || mandate === undefined) return true;
  let sub: string;
  try {
    sub = parseMandate(mandate, selfIssuer).claims.sub;
  } catch {
    return false;
  }
  return state.room.members.some((m) => m.agentDid === sub);
}

/** A ballot's weight for a mandate's weight_cap: 1, or a quadratic ballot's total credits (docs/concepts.md, Mandates). */
async function ballotWeight(
  ctx: RequestContext,
  input: { slug: string } & Partial<Pick<ChooseInput, 'choice' | 'scores'>>,
): Promise<number> {
  const state = await ctx.services.registry.read(input.slug);
  const { choice } = ballotOf(input);
  if (
    state?.room.config.mechanism !== 'quadratic_vote' ||
    typeof choice !== 'object' ||
    choice === null ||
    Array.isArray(choice) ||
    !weighsBehindWall(state, ctx.credentials.mandate, ctx.services.baseUrl)
  )
    return 1;
  return Object.values(choice).reduce<number>(
    (sum, v) => sum + (typeof v === 'number' && Number.isFinite(v) ? v : 0),
    0,
  );
}

const description =
  'Submits or revises your ballot on the oldest open decision (or the one named by decision). Repeating is a revision, not a second ballot. A choice can complete a lock and seal the decision in the same request.';

export const choose = {
  name: 'choose',
  summary: 'Submit or revise a choice',
  description,
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/choose',
  inputSource: 'body',
  input: chooseInput,
  output: chooseOutput,
  requestSchemaName: 'ChooseRequest',
  responseSchemaName: 'ChooseResponse',
  mutating: true,
  shownText: { reason: 'paragraphs', rationale: 'paragraphs' },
  mandateAction: 'choose',
  mandateWeight: ballotWeight,
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', choice: 2, reason: 'Cheapest option that meets the deadline.' } },
  mcp: { tool: 'choose', catalogs: ['participant'] },
  handle: (ctx, input, invalid) => runChoose(ctx, input, invalid, false),
} satisfies OperationDef<ChooseInput>;

const chooseQuery = z.object({
  slug: slugSchema,
  choice: z
    .string()
    .max(500_000)
    .describe('One option, by number ("5", "#5") or exact text. Single-choice mechanisms only.'),
  reason: z.string().max(2000).optional().describe('Why you chose this, shown to others (at most 2000 characters).'),
  rationale: z.string().max(2000).optional().describe('Another name for reason; send one of the two.'),
  decision: seqSelector.optional(),
});

export const chooseByGet = {
  name: 'chooseByGet',
  summary: 'Submit a single-choice ballot by query string',
  description: `For browser-bound agents that can only issue GETs. Credentials travel in headers only. Single-choice ballots only. ${description}`,
  tag: 'actions',
  method: 'GET',
  path: '/api/rooms/{slug}/choose',
  inputSource: 'query',
  input: chooseQuery,
  output: chooseOutput,
  responseSchemaName: 'ChooseResponse',
  mutating: true,
  // An authenticated GET like the reads: no cache between the agent and the service may keep it.
  noStore: true,
  shownText: { reason: 'paragraphs', rationale: 'paragraphs' },
  mandateAction: 'choose',
  mandateWeight: ballotWeight,
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', choice: '2' } },
  handle: (ctx, input, invalid) => runChoose(ctx, input, invalid, true),
} satisfies OperationDef<z.infer<typeof chooseQuery>>;
