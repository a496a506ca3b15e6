/**
 * GET /api/rooms/{slug}/machine — the room's actors for the state-chart visualizer: the chart
 * definitions, the state each actor rests in, and the timeline of machine steps rebuilt from the
 * stored events. Readable by whoever may read the room; it shows no ballots.
 */
import { z } from 'zod';
import { activeIds } from '../visualizer/chart-model.js';
import { machineCharts } from '../visualizer/charts.js';
import { decisionNode, roomNode, timelineOf } from '../visualizer/machine-view.js';
import { eventsUpTo } from '../runtime/history.js';
import type { StoredEvent } from '../store/port.js';
import { readRoom, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

/** Events read to rebuild the timeline; a longer history is cut, oldest kept, and said so. */
const TIMELINE_EVENT_LIMIT = 20_000;

const machineInput = z.object({ slug: slugSchema });

const actorState = z.object({
  state: z.string().describe('The state node the actor rests in, e.g. room.active.deciding'),
  active: z.array(z.string()).describe('That node and its ancestors: every active state node'),
});

const chartSchema = z
  .object({
    id: z.string(),
    initial: z.string(),
    states: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        parent: z.string().nullable(),
        compound: z.boolean(),
        initial: z.string().nullable(),
        transient: z.boolean(),
      }),
    ),
    transitions: z.array(
      z.object({
        id: z.string(),
        source: z.string(),
        target: z.string(),
        event: z.string(),
        guard: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'StateChart' });

const machineOutput = z
  .object({
    slug: z.string(),
    current_through: z.number().int().describe('The last event seq the view reflects'),
    charts: z.object({ room: chartSchema, decision: chartSchema }),
    room: actorState,
    decisions: z.array(actorState.extend({ decision_id: z.string(), seq: z.number().int(), question: z.string() })),
    timeline: z.array(
      z.object({
        seq: z.number().int(),
        event_id: z.string(),
        event_type: z.string(),
        occurred_at: z.string(),
        decision_id: z.string().nullable(),
        chart: z.enum(['room', 'decision']),
        from: z.string().nullable(),
        to: z.string(),
        cause: z.string().describe('The machine event and guard that took the step'),
      }),
    ),
    timeline_truncated: z.boolean().describe('True when the room has more events than the timeline was rebuilt from'),
  })
  .meta({ id: 'RoomMachine' });

export const getRoomMachine = {
  name: 'getRoomMachine',
  summary: "Read the room's state machines",
  description:
    "For the state-chart visualizer: the room and decision chart definitions (states, nesting, transitions with event and guard), the state node each actor rests in, and the timeline of machine steps rebuilt from the room's stored events, each with the event that caused it. Shows no ballots; readable by whoever may read the room.",
  tag: 'rooms',
  method: 'GET',
  path: '/api/rooms/{slug}/machine',
  inputSource: 'query',
  input: machineInput,
  output: machineOutput,
  responseSchemaName: 'RoomMachine',
  mutating: false,
  noStore: true,
  async handle(ctx, input) {
    const { state } = await readRoom(ctx, input.slug, { seesRoom: false });
    const charts = machineCharts();
    const events: StoredEvent[] = [];
    let truncated = false;
    for await (const event of eventsUpTo(ctx.services.store, input.slug, state.head)) {
      if (events.length === TIMELINE_EVENT_LIMIT) {
        truncated = true;
        break;
      }
      events.push(event);
    }
    const room = roomNode(state);
    return {
      slug: state.slug,
      current_through: state.head,
      charts,
      room: { state: room, active: activeIds(charts.room, room) },
      decisions: state.decisions.map((decision) => {
        const node = decisionNode(decision);
        return {
          decision_id: decision.data.id,
          seq: decision.data.seq,
          question: decision.data.question,
          state: node,
          active: activeIds(charts.decision, node),
        };
      }),
      timeline: timelineOf(state, events),
      timeline_truncated: truncated,
    };
  },
} satisfies OperationDef<z.infer<typeof machineInput>>;
