/** GET /api/rooms/{slug} — agent view, `?include=full`, or `?since=N` delta (docs/agents.md, The REST loop). */
import { z } from 'zod';
import { agentView } from '../domain/views/agent-view.js';
import { delta } from '../domain/views/delta.js';
import { fullState } from '../domain/views/full-state.js';
import { agentRoomViewSchema, roomDeltaSchema, roomStateSchema } from '../domain/views/schemas.js';
import { discussionOf } from '../runtime/history.js';
import { readRoom, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const readInput = z.object({
  slug: slugSchema,
  include: z.enum(['full']).optional().describe('"full" returns the complete room state instead of the agent view.'),
  since: z
    .union([z.number().int().min(0), z.string().regex(/^[0-9]{1,15}$/, 'must be a non-negative integer event seq')])
    .transform(Number)
    .optional()
    .describe('An event seq (current_through of your last read): returns only what happened after it.'),
});

const anyView = z.union([agentRoomViewSchema, roomStateSchema, roomDeltaSchema]).meta({
  id: 'ReadRoomResponse',
  description: 'The agent view (default), the full room state (include=full) or a delta (since=N).',
});

export const readRoomOperation = {
  name: 'getRoom',
  summary: 'Read a room',
  description:
    'Returns the agent view (default): a constant-size catch-up keyed by display names. include=full returns the complete state; since=N returns only what happened after event seq N, with current_through as the next cursor.',
  tag: 'rooms',
  method: 'GET',
  path: '/api/rooms/{slug}',
  inputSource: 'query',
  input: readInput,
  output: anyView,
  responseSchemaName: 'ReadRoomResponse',
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa', since: 42 } },
  mcp: { tool: 'read_room', catalogs: ['participant'], readOnly: true },
  async handle(ctx, input) {
    const { state, reader } = await readRoom(ctx, input.slug);
    const now = ctx.services.clock.now();
    if (input.include === 'full') {
      const discussion = await discussionOf(ctx.services.store, input.slug, state.head);
      return fullState(state, reader, now, discussion, (id) => ctx.services.presence.lastSeen(input.slug, id));
    }
    if (input.since !== undefined) {
      const events = await ctx.services.store.events(input.slug, Math.min(input.since, state.head), 201);
      return delta(
        state,
        reader,
        input.since,
        events.filter((e) => e.seq <= state.head),
        now,
      );
    }
    return agentView(state, reader, now);
  },
} satisfies OperationDef<z.infer<typeof readInput>>;
