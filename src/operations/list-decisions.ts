/** GET /api/rooms/{slug}/decisions — the decision list with chain links (docs/receipts.md). */
import { z } from 'zod';
import { decisionSummary } from '../domain/views/decision-summary.js';
import { decisionSummarySchema } from '../domain/views/schemas.js';
import { readRoom, slugInput } from './shared.js';
import type { OperationDef } from './types.js';

export const listDecisions = {
  name: 'listDecisions',
  summary: 'List decisions',
  description:
    'Every decision of the room in seq order, with prev_hash and receipt_hash chain links. Seals what is due first.',
  tag: 'decisions',
  method: 'GET',
  path: '/api/rooms/{slug}/decisions',
  inputSource: 'query',
  input: slugInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      decisions: z.array(decisionSummarySchema).describe('Every decision, in seq order.'),
    })
    .meta({ id: 'ListDecisionsResponse', description: 'The decisions of a room with their chain links.' }),
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  mcp: { tool: 'list_decisions', catalogs: ['host'], readOnly: true },
  async handle(ctx, input) {
    const { state } = await readRoom(ctx, input.slug);
    const now = ctx.services.clock.now();
    return { slug: state.slug, decisions: state.decisions.map((d) => decisionSummary(state, d, now)) };
  },
} satisfies OperationDef<z.infer<typeof slugInput>>;
