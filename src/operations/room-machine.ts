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
    id: z.string().describe('The machine id.'),
    initial: z.string().describe('The initial state node id.'),
    states: z
      .array(
        z.object({
          id: z.string().describe('State node id (dotted path).'),
          name: z.string().describe('The last segment of the id.'),
          parent: z.string().nullable().describe('The parent node id; null for the root.'),
          compound: z.boolean().describe('Whether the node has child states.'),
          initial: z.string().nullable().describe("A compound node's initial child id; else null."),
          transient: z.boolean().describe('Whether the node is left at once (always transitions).'),
        }),
      )
      .describe('Every state node.'),
    transitions: z
      .array(
        z.object({
          id: z.string().describe('Transition id.'),
          source: z.string().describe('Source state node id.'),
          target: z.string().describe('Target state node id.'),
          event: z.string().describe('The machine event that takes it.'),
          guard: z.string().nullable().describe('The guard that must hold; null if none.'),
        }),
      )
      .describe('Every transition.'),
  })
  .meta({ id: 'StateChart', description: 'A statechart: its nodes and transitions.' });

const machineOutput = z
  .object({
    slug: z.string().describe('The room slug.'),
    current_through: z.number().int().describe('The last event seq the view reflects'),
    charts: z.object({ room: chartSchema, decision: chartSchema }).describe('The room and decision statecharts.'),
    room: actorState.describe('Where the room machine rests.'),
    decisions: z
      .array(
        actorState.extend({
          decision_id: z.string().describe('Decision id.'),
          seq: z.number().int().describe('Decision number.'),
          question: z.string().describe('The question.'),
        }),
      )
      .describe('Where each decision machine rests.'),
    timeline: z
      .array(
        z.object({
          seq: z.number().int().describe('Event seq.'),
          event_id: z.string().describe('Event id.'),
          event_type: z.string().describe('Event type.'),
          occurred_at: z.string().describe('When (RFC 3339, UTC).'),
          decision_id: z.string().nullable().describe('The decision; null for room steps.'),
          chart: z.enum(['room', 'decision']).describe('Which chart stepped.'),
          from: z.string().nullable().describe('The state left; null for the first step.'),
          to: z.string().describe('The state entered.'),
          cause: z.string().describe('The machine event and guard that took the step'),
        }),
      )
      .describe('The steps each event caused, oldest first.'),
    timeline_truncated: z.boolean().describe('True when the room has more events than the timeline was rebuilt from'),
  })
  .meta({ id: 'RoomMachine', description: 'The room and its decisions as statecharts, and how they got there.' });

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
  example: { input: { slug: 'k7mq2xw9pa' } },
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
