/** POST /api/rooms/{slug}/discuss — post to the discussion (docs/concepts.md, Decisions and slates). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const discussInput = z
  .object({
    slug: slugSchema,
    body: z.string().min(1).max(100_000).describe('The message (1 to 100 000 characters).'),
    stance: z
      .enum(['agree', 'disagree', 'clarify', 'extend'])
      .optional()
      .describe('How the message relates to the discussion, shown with it.'),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'DiscussRequest', description: 'A discussion message, room-scoped or about one decision.' });

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
  output: z
    .object({ ok: z.literal(true).describe('Always true on success.'), id: z.string().describe('The message id.') })
    .meta({ id: 'DiscussResponse', description: 'The posted message.' }),
  requestSchemaName: 'DiscussRequest',
  responseSchemaName: 'DiscussResponse',
  mutating: true,
  shownText: { body: 'paragraphs' },
  mandateAction: 'discuss',
  deferValidation: true,
  example: {
    input: {
      slug: 'k7mq2xw9pa',
      body: 'eu-west keeps us inside the data residency rules.',
      stance: 'extend',
      decision: 1,
    },
  },
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
