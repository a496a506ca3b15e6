/** GET /api/rooms/{slug}/outcome — decisions in seal order with their signed receipts (docs/receipts.md). */
import type { z } from 'zod';
import { outcomeView } from '../domain/views/outcome.js';
import { outcomeResponseSchema } from '../domain/views/schemas.js';
import { withLogInclusion } from '../tlog/outcome-proofs.js';
import { readRoom, slugInput } from './shared.js';
import type { OperationDef } from './types.js';

export const outcome = {
  name: 'getOutcome',
  summary: 'Read the outcome and receipts',
  description:
    'The outcome record: every decision in seal order (open ones last) with receipt_jws, receipt_hash and prev_hash, the conclusion receipt once closed, and where to get the verification keys. Resolves decisions whose windows have closed first.',
  tag: 'outcomes',
  method: 'GET',
  path: '/api/rooms/{slug}/outcome',
  inputSource: 'query',
  input: slugInput,
  output: outcomeResponseSchema,
  responseSchemaName: 'OutcomeResponse',
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  mcp: { tool: 'outcome', catalogs: ['participant'], readOnly: true },
  async handle(ctx, input) {
    const { state } = await readRoom(ctx, input.slug);
    const receipts = await ctx.services.store.receipts(input.slug);
    const body = outcomeView(state, receipts, ctx.services.baseUrl, ctx.services.clock.now());
    return withLogInclusion(body, ctx.services.tlog, ctx.services.positions);
  },
} satisfies OperationDef<z.infer<typeof slugInput>>;
