/**
 * The agent half of the start-up warm-up (docs/performance.md, Warm from the first request): what an
 * agent platform sends, visit after visit. Each visit is one agent's whole stay, as the MCP SDKs'
 * own clients make it: the era's opening (`server/discover` for 2026-07-28; `initialize`, the
 * `initialized` notification and the refused event-stream GET for 2025-11-25), then `join_room`,
 * `wait`, `choose` with a ranking and `discuss`. Rooms are shaped as agent rooms are (ranked choice,
 * a quorum of the room's visitors), so the last visitor's choice seals the decision and signs its
 * receipt. A fresh process served its first agents at twice the CPU per call it needed once warm,
 * in the SDK, zod, fastify and the domain alike; a warm-up of REST calls did not reach that.
 */
import { type Era, WarmUpClient } from './warm-up-client.js';

/** Visitors per room: the quorum, so the room's last choice seals it. */
const VISITORS_PER_ROOM = 10;
const OPTIONS = ['alpha', 'beta', 'gamma'];
/** Exchanges one visit makes, averaged over both eras (2026-07-28: 5; 2025-11-25: 7). */
export const EXCHANGES_PER_VISIT = 6;

/** An agent room: ranked choice, sealed by its visitors' last choice (a quorum of all of them). */
const AGENT_ROOM = {
  question: 'Which first, warm-up?',
  options: OPTIONS,
  display_name: 'creator',
  config: {
    mechanism: 'ranked_choice',
    early_close: true,
    settle_window: 0,
    quorum: VISITORS_PER_ROOM,
    creator_votes: false,
  },
};

async function open(client: WarmUpClient, era: Era): Promise<void> {
  if (era === '2026-07-28') {
    client.expect(await client.rpc(era, 1, 'server/discover'), 200);
    return;
  }
  const initialize = { protocolVersion: era, capabilities: {}, clientInfo: WarmUpClient.clientInfo };
  client.expect(await client.rpc(era, 0, 'initialize', initialize), 200);
  client.expect(await client.rpc(era, null, 'notifications/initialized'), 202);
  // The service is stateless: the client learns there is no event stream to open from this refusal.
  const stream = { accept: 'text/event-stream', 'mcp-protocol-version': era };
  client.expect(await client.exchange('GET', '/mcp', stream), 405);
}

async function visit(client: WarmUpClient, slug: string, index: number): Promise<void> {
  const era: Era = index % 2 === 0 ? '2026-07-28' : '2025-11-25';
  await open(client, era);
  const joined = await client.tool(era, 2, 'join_room', { slug, display_name: `visitor ${index}` });
  const token = joined?.participant_token;
  if (typeof token !== 'string') return;
  await client.tool(era, 3, 'wait', { slug, token, wait_seconds: 0 });
  const ranking = OPTIONS.map((_, i) => OPTIONS[(i + index) % OPTIONS.length]!);
  await client.tool(era, 4, 'choose', { slug, token, choice: ranking });
  await client.tool(era, 5, 'discuss', { slug, token, body: `visitor ${index} ranked ${ranking[0]} first` });
}

/** `visits` agent visits, in rooms of VISITORS_PER_ROOM whose visitors arrive together, as a platform's agents do. */
export async function agentVisits(client: WarmUpClient, visits: number): Promise<void> {
  for (let first = 0; first < visits; first += VISITORS_PER_ROOM) {
    const slug = (await client.rest('POST', '/api/rooms', undefined, AGENT_ROOM)).slug;
    if (typeof slug !== 'string') return;
    const count = Math.min(VISITORS_PER_ROOM, visits - first);
    await Promise.all(Array.from({ length: count }, (_, i) => visit(client, slug, first + i)));
  }
}
