/** POST /api/rooms/{slug}/options — propose an option (docs/concepts.md, Decisions and slates). */
import { z } from 'zod';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const proposeInput = z
  .object({
    slug: slugSchema,
    option: z
      .string()
      .min(1)
      .max(500_000)
      .refine((o) => o.trim().length > 0, 'must not be whitespace-only'),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'ProposeRequest' });

export const propose = {
  name: 'propose',
  summary: 'Propose an option',
  description:
    'Adds an option to the oldest open decision (or the one named by decision). Fluid decisions accept proposals while choosing; slates only while collecting. A duplicate returns the unchanged slate.',
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/options',
  inputSource: 'body',
  input: proposeInput,
  output: z
    .object({
      slug: z.string(),
      decision: z.number().int(),
      accepted: z.boolean(),
      options: z.array(z.string()),
      choosing_open: z.boolean(),
      reason: z.string().optional(),
    })
    .meta({ id: 'ProposeResponse' }),
  requestSchemaName: 'ProposeRequest',
  responseSchemaName: 'ProposeResponse',
  mutating: true,
  shownText: { option: 'line' },
  mandateAction: 'propose',
  deferValidation: true,
  mcp: { tool: 'propose', catalogs: ['participant'] },
  async handle(ctx, input, invalid) {
    return act(ctx, input.slug, {
      action: 'propose',
      route: `POST /api/rooms/${input.slug}/options`,
      build: (_state, actor, now) => ({
        type: 'PROPOSE',
        now,
        actor,
        option: input.option ?? '',
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (info, state) => {
        const d = state.decisions.find((x) => x.data.id === info.decision_id)!;
        return {
          slug: state.slug,
          decision: d.data.seq,
          accepted: info.accepted as boolean,
          options: d.data.options,
          choosing_open:
            d.phase === 'voting' || d.phase === 'settling' || d.phase === 'sealed' || d.phase === 'resolved',
          ...(typeof info.reason === 'string' ? { reason: info.reason } : {}),
        };
      },
    });
  },
} satisfies OperationDef<z.infer<typeof proposeInput>>;
