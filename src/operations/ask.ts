/** POST /api/rooms/{slug}/ask — open a decision (docs/concepts.md, Decisions and slates). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { askDecision } from '../domain/views/decision-summary.js';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const askInput = z
  .object({
    slug: slugSchema,
    question: z.string().min(3).max(500),
    context: z.string().max(100_000).nullable().optional(),
    options: z
      .array(
        z
          .string()
          .min(1)
          .max(500_000)
          .refine((o) => o.trim().length > 0, 'must not be whitespace-only'),
      )
      .max(500)
      .optional(),
    eligible: z.array(z.string().min(1).max(100)).max(1000).optional(),
    eligible_participant_ids: z.array(z.string().min(1).max(100)).max(1000).optional(),
    voting_window: z.number().int().min(60).max(1_209_600).optional(),
    proposal_window: z.number().int().min(1).max(1_209_600).optional(),
    agreement: z.boolean().optional(),
  })
  .meta({ id: 'AskRequest' });

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
    .object({ ok: z.literal(true), slug: z.string(), decision: z.record(z.string(), z.unknown()) })
    .meta({ id: 'AskResponse' }),
  requestSchemaName: 'AskRequest',
  responseSchemaName: 'AskResponse',
  mutating: true,
  shownText: { question: 'line', context: 'paragraphs', options: 'line' },
  mandateAction: 'ask',
  deferValidation: true,
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
