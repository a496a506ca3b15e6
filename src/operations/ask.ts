/** POST /api/rooms/{slug}/ask — open a decision (docs/concepts.md, Decisions and slates). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { askDecision } from '../domain/views/decision-summary.js';
import { askDecisionSchema } from '../domain/views/schemas.js';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const askInput = z
  .object({
    slug: slugSchema,
    question: z.string().min(3).max(500).describe('The question to decide (3 to 500 characters).'),
    context: z
      .string()
      .max(100_000)
      .nullable()
      .optional()
      .describe('Background for the question, shown with it (at most 100 000 characters).'),
    options: z
      .array(
        z
          .string()
          .min(1)
          .max(500_000)
          .refine((o) => o.trim().length > 0, 'must not be whitespace-only'),
      )
      .max(500)
      .optional()
      .describe(
        'The options (at most max_options, each non-empty). Omit to collect them by proposals: with proposal_window the slate freezes when it ends; without, choosing is open at once and proposals join the running slate.',
      ),
    eligible: z
      .array(z.string().min(1).max(100))
      .max(1000)
      .optional()
      .describe(
        'Who may choose, by display name (exact, case-sensitive). Send this or eligible_participant_ids, not both; omit both for the whole room electorate.',
      ),
    eligible_participant_ids: z
      .array(z.string().min(1).max(100))
      .max(1000)
      .optional()
      .describe('Who may choose, by participant id. Send this or eligible, not both.'),
    voting_window: z
      .number()
      .int()
      .min(60)
      .max(1_209_600)
      .optional()
      .describe(
        'Seconds the decision accepts choices once choosing opens (60 to 1 209 600); default: the room voting_window.',
      ),
    proposal_window: z
      .number()
      .int()
      .min(1)
      .max(1_209_600)
      .optional()
      .describe(
        'Seconds to collect proposals before choosing opens (1 to 1 209 600). Present: a slate that freezes when it ends (or at start_choosing); absent: choosing opens at once.',
      ),
    agreement: z
      .boolean()
      .optional()
      .describe(
        'true opens an agreement decision: one proposal to accept or reject, sealed only by unanimity. Only under simple_majority or supermajority.',
      ),
  })
  .meta({ id: 'AskRequest', description: 'A new decision.' });

type AskOp = z.infer<typeof askInput>;

export const ask = {
  name: 'ask',
  summary: 'Open a decision',
  description:
    'Opens a decision. Without proposal_window it is fluid (choices open at once); with proposal_window it collects options first (slate) until start-choosing or the window ends. agreement: true requires unanimous acceptance (simple_majority and supermajority rooms only).',
  tag: 'decisions',
  method: 'POST',
  path: '/api/rooms/{slug}/ask',
  inputSource: 'body',
  input: askInput,
  output: z
    .object({
      ok: z.literal(true).describe('Always true on success.'),
      slug: z.string().describe('The room slug.'),
      decision: askDecisionSchema,
    })
    .meta({ id: 'AskResponse', description: 'The decision just opened.' }),
  requestSchemaName: 'AskRequest',
  responseSchemaName: 'AskResponse',
  mutating: true,
  shownText: { question: 'line', context: 'paragraphs', options: 'line' },
  mandateAction: 'ask',
  deferValidation: true,
  example: {
    input: { slug: 'k7mq2xw9pa', question: 'Which region do we deploy to first?', options: ['eu-west', 'us-east'] },
  },
  mcp: { tool: 'ask', catalogs: ['participant', 'host'] },
  async handle(ctx, input, invalid) {
    const decisionId = randomUUID();
    return act(ctx, input.slug, {
      action: 'ask',
      route: `POST /api/rooms/${input.slug}/ask`,
      build: (_state, actor, now) => ({
        type: 'ASK',
        now,
        actor,
        decisionId,
        input: invalid ? null : input,
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (_info, state) => ({
        ok: true,
        slug: state.slug,
        decision: askDecision(state, state.decisions.find((d) => d.data.id === decisionId)!),
      }),
    });
  },
} satisfies OperationDef<AskOp>;
