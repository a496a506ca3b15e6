/**
 * GET /api/rooms/{slug}/log-positions — where the room's receipts are in the transparency log, and
 * the VRF position labels (with proofs) that find them (docs/transparency-log.md, The member
 * endpoint). Behind the room's read wall exactly as /outcome: the labels are what link leaves to
 * the room, so whoever may not read the outcome gets the same refusal. REST only.
 */
import type { z } from 'zod';
import { logPositionsResponseSchema } from '../domain/views/schemas.js';
import { roomUrl } from '../runtime/sealing.js';
import { roomLogPositions } from '../tlog/room-positions.js';
import { readRoom, slugInput } from './shared.js';
import type { OperationDef } from './types.js';

export const logPositions = {
  name: 'getLogPositions',
  summary: "Find the room's receipts in the transparency log",
  description:
    "For each position of the room's receipt chain (and the next, unused one): the receipt hash, its leaf index once published, and its label under every position key with the ECVRF proof. Scan the log's entries for these labels to find every leaf of the room, and to see a second receipt logged for one position (a split view). Readable by whoever may read the outcome.",
  tag: 'outcomes',
  method: 'GET',
  path: '/api/rooms/{slug}/log-positions',
  inputSource: 'query',
  input: slugInput,
  output: logPositionsResponseSchema,
  responseSchemaName: 'LogPositionsResponse',
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  async handle(ctx, input) {
    // The same wall as /outcome (readRoom); reading positions is not a visit to the room.
    await readRoom(ctx, input.slug, { seesRoom: false });
    const { tlog, positions } = ctx.services;
    if (!tlog || !positions) throw new Error('the transparency log is not running in this process');
    const receipts = await ctx.services.store.receipts(input.slug);
    return roomLogPositions(tlog, positions, roomUrl(ctx.services.baseUrl, input.slug), receipts);
  },
} satisfies OperationDef<z.infer<typeof slugInput>>;
