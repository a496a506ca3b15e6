/** GET /api/rooms/{slug}/events — replay stored events after a cursor (docs/agents.md, The REST loop). */
import { z } from 'zod';
import { roomEventSchema } from '../domain/views/event-schemas.js';
import { redactEvent } from '../domain/views/events.js';
import { cursorSeq, sinceEventIdSchema, sinceSeqSchema } from '../engagement/cursor.js';
import { readRoom, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const DEFAULT_LIMIT = 100;

const listEventsInput = z.object({
  slug: slugSchema,
  since_seq: sinceSeqSchema.optional(),
  since_event_id: sinceEventIdSchema.optional(),
  limit: z
    .union([z.number().int(), z.string().regex(/^[0-9]{1,9}$/, 'must be an integer')])
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .optional()
    .describe('Page size, 1..1000 (default 100)'),
});

export { roomEventSchema };

export const listEvents = {
  name: 'listEvents',
  summary: 'Replay stored events',
  description:
    'Stored events with seq greater than the cursor (since_event_id, else since_seq, else 0), ascending, at most limit; has_more tells whether to page on with since_seq = the last seq returned. Events mirror room state, which stays authoritative: re-read the room before acting on what a replay shows.',
  tag: 'events',
  method: 'GET',
  path: '/api/rooms/{slug}/events',
  inputSource: 'query',
  input: listEventsInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      events: z.array(roomEventSchema).describe('The events after the cursor, oldest first.'),
      has_more: z.boolean().describe('true when more events follow: page on with since_seq set to the last seq.'),
    })
    .meta({ id: 'ListEventsResponse', description: 'A page of room events.' }),
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa', since_seq: 10, limit: 100 } },
  mcp: { tool: 'list_events', catalogs: ['host'], readOnly: true },
  async handle(ctx, input) {
    const { state } = await readRoom(ctx, input.slug, { seesRoom: false });
    const { store } = ctx.services;
    const after = await cursorSeq(store, input.slug, { eventId: input.since_event_id, sinceSeq: input.since_seq }, 0);
    const limit = input.limit ?? DEFAULT_LIMIT;
    const events = await store.events(input.slug, after, limit + 1);
    return {
      slug: state.slug,
      events: events.slice(0, limit).map((event) => redactEvent(state, event)),
      has_more: events.length > limit,
    };
  },
} satisfies OperationDef<z.infer<typeof listEventsInput>>;
