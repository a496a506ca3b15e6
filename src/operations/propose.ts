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
      .refine((o) => o.trim().length > 0, 'must not be whitespace-only')
      .describe(
        'The option text (not whitespace-only). The same text as an existing option returns the unchanged slate; a text that only reads like one (spaces, compatibility forms, look-alike letters) is refused with input.invalid (reason lookalike).',
      ),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'ProposeRequest', description: 'A new option for a decision that accepts proposals.' });

export const propose = {
  name: 'propose',
  summary: 'Propose an option',
  description:
    'Adds an option to the oldest open decision (or the one named by decision). Fluid decisions accept proposals while choosing; slates only while collecting. A duplicate returns the unchanged slate; a look-alike of an existing option is refused, naming it.',
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/options',
  inputSource: 'body',
  input: proposeInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      decision: z.number().int().describe('The decision number.'),
      accepted: z
        .boolean()
        .describe(
          'Whether the option is on the slate: true when added, and also when the same text (or an alias N / #N) was already there (reason says so); false when the slate is frozen.',
        ),
      options: z.array(z.string()).describe('The slate after the proposal.'),
      choosing_open: z.boolean().describe('Whether choices are accepted now.'),
      reason: z
        .string()
        .optional()
        .describe('Why the slate did not change: the option was already on it, or the slate is frozen.'),
    })
    .meta({ id: 'ProposeResponse', description: 'The slate after the proposal.' }),
  requestSchemaName: 'ProposeRequest',
  responseSchemaName: 'ProposeResponse',
  mutating: true,
  shownText: { option: 'line' },
  mandateAction: 'propose',
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', option: 'ap-south', decision: 1 } },
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
