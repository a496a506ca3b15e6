/** POST /api/rooms/{slug}/discuss — post to the discussion (docs/concepts.md, Decisions and slates). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const discussInput = z
  .object({
    slug: slugSchema,
    body: z.string().min(1).max(100_000),
    stance: z.enum(['agree', 'disagree', 'clarify', 'extend']).optional(),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'DiscussRequest' });

export const discuss = {
  name: 'discuss',
  summary: 'Post to the discussion',
  description:
    'Posts a message. Attached to the oldest open decision unless decision names another; room-scoped when nothing is open. Optional stance: agree, disagree, clarify, extend.',
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/discuss',
  inputSource: 'body',
  input: discussInput,
  output: z.object({ ok: z.literal(true), id: z.string() }).meta({ id: 'DiscussResponse' }),
  requestSchemaName: 'DiscussRequest',
  responseSchemaName: 'DiscussResponse',
  mutating: true,
  shownText: { body: 'paragraphs' },
  mandateAction: 'discuss',
  deferValidation: true,
  mcp: { tool: 'discuss', catalogs: ['participant'] },
  async handle(ctx, input, invalid) {
    const messageId = randomUUID();
    return act(ctx, input.slug, {
      action: 'discuss',
      route: `POST /api/rooms/${input.slug}/discuss`,
      build: (_state, actor, now) => ({
        type: 'DISCUSS',
        now,
        actor,
        messageId,
        body: input.body ?? '',
        stance: input.stance ?? null,
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (info) => ({ ok: true, id: info.id as string }),
    });
  },
} satisfies OperationDef<z.infer<typeof discussInput>>;
