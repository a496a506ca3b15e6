/**
 * The checks of GET /api/rooms/{slug}/events/stream (docs/agents.md, The REST loop), written as an operation so both run
 * through the same mandate verification and read wall as every other read: it answers where the
 * stream starts. The route (http/event-stream-route.ts) runs it, then hands the response to engagement;
 * it is not in the operation table because its success is a stream, not a JSON body.
 */
import { z } from 'zod';
import { cursorSeq, sinceEventIdSchema, sinceSeqSchema } from '../engagement/cursor.js';
import { readRoom, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const streamInput = z.object({
  slug: slugSchema,
  since_seq: sinceSeqSchema.optional(),
  since_event_id: sinceEventIdSchema.optional(),
  last_event_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('The Last-Event-ID header, which takes precedence over both query cursors.'),
});

export const openEventStream = {
  name: 'streamEvents',
  summary: 'Stream events (SSE)',
  description:
    'Server-sent events: every stored event after the cursor (Last-Event-ID, else since_event_id, else since_seq, else the current head), then live ones, with a keep-alive comment every 15 s. The stream ends after room.concluded.',
  tag: 'events',
  method: 'GET',
  path: '/api/rooms/{slug}/events/stream',
  inputSource: 'query',
  input: streamInput,
  output: z.object({ after_seq: z.number().int().describe('The stream starts after this event seq.') }),
  mutating: false,
  example: { input: { slug: 'k7mq2xw9pa', since_seq: 10 } },
  async handle(ctx, input) {
    const { state } = await readRoom(ctx, input.slug, { seesRoom: false });
    const cursor =
      input.last_event_id !== undefined
        ? { eventId: input.last_event_id, field: 'Last-Event-ID' }
        : { eventId: input.since_event_id, sinceSeq: input.since_seq };
    return { after_seq: await cursorSeq(ctx.services.store, input.slug, cursor, state.head) };
  },
} satisfies OperationDef<z.infer<typeof streamInput>>;
