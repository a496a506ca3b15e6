/** POST /api/rooms/{slug}/start-choosing — freeze a slate and open choices now (docs/concepts.md, Decisions and slates). */
import { z } from 'zod';
import { iso } from '../domain/views/common.js';
import { startedDecisionSchema } from '../domain/views/schemas.js';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const startInput = z
  .object({
    slug: slugSchema,
    decision_id: z.string().min(1).max(100).optional().describe('The decision id (UUID); or name it by decision.'),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'StartChoosingRequest', description: 'Which collecting decision to open for choices.' });

export const startChoosing = {
  name: 'startChoosing',
  summary: 'Start choosing on a slate',
  description:
    "Freezes a collecting (proposing) decision's slate and opens choices now; its voting window starts now. Targets the named decision, else the oldest proposing one. Already voting → success with already_open: true.",
  tag: 'decisions',
  method: 'POST',
  path: '/api/rooms/{slug}/start-choosing',
  inputSource: 'body',
  input: startInput,
  output: z
    .object({
      ok: z.literal(true).describe('Always true on success.'),
      slug: z.string().describe('The room slug.'),
      decision: startedDecisionSchema,
      already_open: z.literal(true).optional().describe('Present when choosing was already open.'),
    })
    .meta({ id: 'StartChoosingResponse', description: 'The decision now open for choices.' }),
  requestSchemaName: 'StartChoosingRequest',
  responseSchemaName: 'StartChoosingResponse',
  mutating: true,
  mandateAction: 'start_choosing',
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', decision: 1 } },
  mcp: { tool: 'start_choosing', catalogs: ['participant', 'host'], idempotent: true },
  async handle(ctx, input, invalid) {
    return act(ctx, input.slug, {
      action: 'start_choosing',
      route: `POST /api/rooms/${input.slug}/start-choosing`,
      build: (_state, actor, now) => ({
        type: 'START_CHOOSING',
        now,
        actor,
        ...(input.decision_id !== undefined ? { decisionId: input.decision_id } : {}),
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (info, state) => {
        const d = state.decisions.find((x) => x.data.id === info.decision_id)!;
        return {
          ok: true,
          slug: state.slug,
          decision: {
            id: d.data.id,
            seq: d.data.seq,
            options: d.data.options,
            voting_opens_at: iso(d.data.votingOpensAt),
            voting_ends_at: iso(d.data.votingEndsAt),
            status: 'voting',
          },
          ...(info.already_open === true ? { already_open: true } : {}),
        };
      },
    });
  },
} satisfies OperationDef<z.infer<typeof startInput>>;
