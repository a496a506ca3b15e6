/** POST /api/rooms/{slug}/abstain — a formal response without a preference (docs/concepts.md, Decisions and slates). */
import { z } from 'zod';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const abstainInput = z
  .object({
    slug: slugSchema,
    reason: z.string().min(1).max(500).describe('Why you abstain, shown to others (1 to 500 characters).'),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'AbstainRequest', description: 'An abstention; it replaces any earlier choice of yours.' });

export const abstain = {
  name: 'abstain',
  summary: 'Abstain with a reason',
  description:
    'Abstains on the oldest open decision (or the one named by decision). Counts toward quorum, never toward any option, replaces an earlier choice, and appears with its reason in the signed receipt. Unavailable on agreement decisions.',
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/abstain',
  inputSource: 'body',
  input: abstainInput,
  output: z
    .object({
      ok: z.literal(true).describe('Always true on success.'),
      slug: z.string().describe('The room slug.'),
      decision: z.number().int().describe('The decision number.'),
      abstained: z.literal(true).describe('Always true.'),
      reason: z.string().describe('The reason recorded.'),
      status: z.enum(['voting', 'resolved']).describe('resolved when the abstention sealed the decision.'),
      resolved_winner: z
        .string()
        .nullable()
        .describe('The winner, when the abstention sealed the decision; else null.'),
      resolved_outcome: z
        .enum(['pass', 'plurality_pass', 'no_pass', 'tied'])
        .nullable()
        .describe('How the count ended, when the abstention sealed the decision; else null.'),
    })
    .meta({ id: 'AbstainResponse', description: 'The abstention as recorded.' }),
  requestSchemaName: 'AbstainRequest',
  responseSchemaName: 'AbstainResponse',
  mutating: true,
  shownText: { reason: 'paragraphs' },
  mandateAction: 'choose',
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', reason: 'I have a conflict of interest.' } },
  mcp: { tool: 'abstain', catalogs: ['participant'] },
  async handle(ctx, input, invalid) {
    return act(ctx, input.slug, {
      action: 'abstain',
      route: `POST /api/rooms/${input.slug}/abstain`,
      build: (_state, actor, now) => ({
        type: 'ABSTAIN',
        now,
        actor,
        reason: input.reason ?? '',
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (info, state) => {
        const d = state.decisions.find((x) => x.data.id === info.decision_id)!;
        return {
          ok: true,
          slug: state.slug,
          decision: d.data.seq,
          abstained: true,
          reason: info.reason as string,
          status: d.data.seal ? 'resolved' : 'voting',
          resolved_winner: d.data.seal?.winner ?? null,
          resolved_outcome: d.data.seal?.outcome ?? null,
        };
      },
    });
  },
} satisfies OperationDef<z.infer<typeof abstainInput>>;
