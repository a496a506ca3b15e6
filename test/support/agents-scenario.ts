/**
 * The agent-platform afternoon of issue 27, as a reusable driver: a creator opens R rooms over REST,
 * then N agents (R rooms of N/R) each connect with the MCP SDK's own client — half the official v2
 * client pinned to 2026-07-28, half the v1 SDK client on 2025-11-25 — and join_room → wait → choose →
 * discuss. Every room must end resolved with a receipt chain that verifies against the JWKS.
 *
 * Nothing is retried: every failure is counted by kind (a JSON-RPC error, an `isError` tool result, an
 * HTTP error from the transport or a REST call, anything else) with its first words, and every call's
 * latency is kept by step, so a test asserts zero errors and a bench reads `choose` p50/p99.
 *
 * The rooms are shaped so that every agent's `choose` is accepted: ranked choice with the electorate
 * floor (`quorum`) at the room's agent count and a non-voting creator resolves exactly when the last
 * agent has chosen — never earlier, so no agent meets an already-sealed decision.
 */
import { randomUUID } from 'node:crypto';
import { type Jwks, verifyRoomReceiptChain } from '../../src/client/verify.js';
import { allEvents, percentile } from './ledger.js';
import { connectLegacy, connectModern, type McpSession } from './mcp-clients.js';

export type ScenarioStep = 'connect' | 'join_room' | 'wait' | 'choose' | 'discuss';
export type ScenarioErrorKind = 'jsonrpc' | 'tool' | 'http' | 'other';

export interface ScenarioError {
  kind: ScenarioErrorKind;
  step: ScenarioStep | 'create' | 'outcome';
  detail: string;
  /** The service failed itself (a 500, `internal.error`, JSON-RPC internal error): never acceptable, even under faults. */
  internal: boolean;
}

/** What the service acknowledged in one room: the seats it created and the messages it accepted. */
export interface RoomAcknowledged {
  slug: string;
  creatorToken: string;
  participantIds: string[];
  said: string[];
}

export interface ScenarioOptions {
  /** Where both REST and MCP (`/mcp`) are reached: one process or the load balancer in front of many. */
  base: string;
  agents?: number;
  rooms?: number;
  /** How long an agent's `wait` may park before it asks again (seconds). */
  waitSeconds?: number;
}

export interface ScenarioResult {
  agents: number;
  rooms: { slug: string; resolved: boolean; receipts: number; problems: string[] }[];
  errors: ScenarioError[];
  /** Milliseconds per call, by step. */
  latencies: Record<ScenarioStep, number[]>;
  /** Agents per era, to show both clients took part. */
  eras: Record<string, number>;
  /** Per room, every write the service acknowledged (for audits after faults). */
  acknowledged: RoomAcknowledged[];
  elapsedMs: number;
}

const OPTIONS = ['alpha', 'beta', 'gamma'];

interface Room {
  slug: string;
  creatorToken: string;
}

/** What kind of failure a rejected MCP call was: the transport's HTTP error or a JSON-RPC error. */
function classify(error: unknown): ScenarioErrorKind {
  if (!(error instanceof Error)) return 'other';
  if (/HTTP/i.test(error.constructor.name) || /HTTP \d{3}|status code \d{3}/i.test(error.message)) return 'http';
  if (typeof (error as { code?: unknown }).code === 'number') return 'jsonrpc';
  return 'other';
}

const INTERNAL = /internal\.error|\b500\b|-32603/;

function failure(kind: ScenarioErrorKind, step: ScenarioError['step'], detail: string): ScenarioError {
  return { kind, step, detail, internal: INTERNAL.test(detail) };
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
  return text.slice(0, 300);
}

async function createRoom(base: string, size: number, index: number, errors: ScenarioError[]): Promise<Room | null> {
  try {
    const response = await fetch(`${base}/api/rooms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        question: `Which first, room ${index}?`,
        options: OPTIONS,
        display_name: 'creator',
        config: {
          mechanism: 'ranked_choice',
          early_close: true,
          settle_window: 0,
          quorum: size,
          creator_votes: false,
        },
      }),
    });
    const body = (await response.json().catch(() => null)) as any;
    if (response.status !== 201 && response.status !== 200) {
      errors.push(failure('http', 'create', `${response.status} ${JSON.stringify(body).slice(0, 200)}`));
      return null;
    }
    return { slug: body.slug, creatorToken: body.creator_token };
  } catch (error) {
    errors.push(failure(classify(error), 'create', describe(error)));
    return null;
  }
}

/** One agent's whole visit; every failure is recorded and ends the visit. */
async function runAgent(
  base: string,
  room: RoomAcknowledged,
  index: number,
  waitSeconds: number,
  result: ScenarioResult,
): Promise<void> {
  const connect = index % 2 === 0 ? connectModern : connectLegacy;
  let session: McpSession | null = null;

  const timed = async (step: ScenarioStep, run: () => Promise<unknown>): Promise<any> => {
    const started = performance.now();
    let outcome: unknown;
    try {
      outcome = await run();
    } catch (error) {
      result.errors.push(failure(classify(error), step, describe(error)));
      return undefined;
    }
    result.latencies[step].push(performance.now() - started);
    return outcome;
  };
  const tool = async (step: Exclude<ScenarioStep, 'connect'>, args: Record<string, unknown>): Promise<any> => {
    const outcome = await timed(step, () => session!.call(step, args));
    if (outcome === undefined) return undefined;
    const { isError, body } = outcome as { isError: boolean; body: any };
    if (isError) {
      result.errors.push(failure('tool', step, JSON.stringify(body).slice(0, 300)));
      return undefined;
    }
    return body;
  };

  session = await timed('connect', () => connect(`${base}/mcp`));
  if (!session) return;
  result.eras[session.era] = (result.eras[session.era] ?? 0) + 1;
  try {
    const joined = await tool('join_room', { slug: room.slug, display_name: `agent-${index}` });
    if (!joined) return;
    const token = joined.participant_token as string;
    room.participantIds.push(joined.participant_id as string);
    // Wait until the open decision asks for this agent's choice (it does from the start; a wait that
    // times out is asked again, as an agent would).
    for (let asked = 0; ; asked++) {
      const waited = await tool('wait', { slug: room.slug, token, wait_seconds: waitSeconds });
      if (!waited) return;
      if (waited.status === 'actionable') break;
      if (asked >= 5) {
        result.errors.push(failure('other', 'wait', `never actionable: ${JSON.stringify(waited)}`));
        return;
      }
    }
    // A ranking that varies by agent, so the instant runoff has work to do.
    const ranking = OPTIONS.map((_, i) => OPTIONS[(i + index) % OPTIONS.length]!);
    if (!(await tool('choose', { slug: room.slug, token, choice: ranking }))) return;
    const body = `agent ${index} ranked ${ranking[0]} first (${randomUUID()})`;
    if (await tool('discuss', { slug: room.slug, token, body })) room.said.push(body);
  } finally {
    await session.close().catch(() => undefined);
  }
}

/** The room's outcome, read with the creator's token, and its receipt chain verified against the JWKS. */
async function auditRoom(base: string, room: RoomAcknowledged, jwks: Jwks, result: ScenarioResult): Promise<void> {
  const problems: string[] = [];
  let receipts = 0;
  let resolved = false;
  try {
    const response = await fetch(`${base}/api/rooms/${room.slug}/outcome`, {
      headers: { authorization: `Bearer ${room.creatorToken}` },
    });
    const outcome = (await response.json()) as any;
    if (!response.ok) {
      result.errors.push(failure('http', 'outcome', `${response.status} ${JSON.stringify(outcome)}`));
    }
    const decision = outcome?.decisions?.[0];
    resolved = decision?.status === 'resolved' && typeof decision.receipt_hash === 'string';
    if (!resolved)
      problems.push(`decision 1 is not resolved with a receipt: ${JSON.stringify(decision).slice(0, 300)}`);
    const report = await verifyRoomReceiptChain(outcome, { jwks, room: 'from-body' });
    receipts = report.receipts.length;
    problems.push(...report.errors);
  } catch (error) {
    problems.push(describe(error));
  }
  result.rooms.push({ slug: room.slug, resolved, receipts, problems });
}

export async function runAgentsScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const agents = options.agents ?? 200;
  const roomCount = options.rooms ?? 10;
  const perRoom = Math.ceil(agents / roomCount);
  const started = performance.now();
  const result: ScenarioResult = {
    agents,
    rooms: [],
    errors: [],
    latencies: { connect: [], join_room: [], wait: [], choose: [], discuss: [] },
    eras: {},
    acknowledged: [],
    elapsedMs: 0,
  };
  const rooms = result.acknowledged;
  for (let i = 0; i < roomCount; i++) {
    const room = await createRoom(options.base, perRoom, i, result.errors);
    if (room) rooms.push({ ...room, participantIds: [], said: [] });
  }
  if (rooms.length === roomCount) {
    await Promise.all(
      Array.from({ length: agents }, (_, i) =>
        runAgent(options.base, rooms[i % roomCount]!, i, options.waitSeconds ?? 10, result),
      ),
    );
    const jwks = (await (await fetch(`${options.base}/.well-known/jwks.json`)).json()) as Jwks;
    for (const room of rooms) await auditRoom(options.base, room, jwks, result);
  }
  result.elapsedMs = performance.now() - started;
  return result;
}

/** Errors grouped by kind, step and first words: what a report or an assertion message shows. */
export function errorSummary(result: ScenarioResult): Record<string, number> {
  const summary: Record<string, number> = {};
  for (const error of result.errors) {
    const key = `${error.kind} ${error.step}: ${error.detail.slice(0, 160)}`;
    summary[key] = (summary[key] ?? 0) + 1;
  }
  return summary;
}

/** Every room that did not resolve with a verifying receipt chain, with why. */
export function roomProblems(result: ScenarioResult): string[] {
  return result.rooms.flatMap((room) => room.problems.map((problem) => `${room.slug}: ${problem}`));
}

/** One line for logs and reports: errors, rooms resolved, and p50/p99 per step. */
export function scenarioLine(label: string, result: ScenarioResult): string {
  const steps = (['join_room', 'wait', 'choose', 'discuss'] as const)
    .map(
      (step) =>
        `${step} p50 ${percentile(result.latencies[step], 50).toFixed(0)} / p99 ${percentile(result.latencies[step], 99).toFixed(0)} ms`,
    )
    .join(', ');
  const resolved = result.rooms.filter((room) => room.resolved && room.problems.length === 0).length;
  return (
    `${label}: ${result.agents} agents (${Object.entries(result.eras)
      .map(([era, n]) => `${n}×${era}`)
      .join(', ')}), ${result.errors.length} errors, ${resolved}/${result.rooms.length} rooms verified, ` +
    `${steps}, ${(result.elapsedMs / 1000).toFixed(1)} s`
  );
}

/**
 * After faults: every seat and message the service acknowledged in these rooms is there, each
 * message exactly once (read back over REST with the creator's token). Empty when nothing was lost.
 */
export async function acknowledgedProblems(base: string, acknowledged: RoomAcknowledged[]): Promise<string[]> {
  const problems: string[] = [];
  for (const room of acknowledged) {
    const events = await allEvents(base, room.slug, room.creatorToken);
    const joined = new Set(
      events.filter((e) => e.event_type === 'participant.joined').map((e) => e.data.participant_id as string),
    );
    for (const id of room.participantIds)
      if (!joined.has(id)) problems.push(`${room.slug}: seat ${id} acknowledged, not stored`);
    const posted = events.filter((e) => e.event_type === 'discussion.posted').map((e) => e.data.body ?? e.data.text);
    for (const text of room.said) {
      const times = posted.filter((body) => body === text).length;
      if (times !== 1) problems.push(`${room.slug}: "${text}" acknowledged, stored ${times} times`);
    }
  }
  return problems;
}
