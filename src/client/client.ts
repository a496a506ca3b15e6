/**
 * ConclaveClient: the REST surface as methods (docs/agents.md, The client library). Every method takes one input object — path
 * parameters, the body or query fields, and optionally `auth`, `idempotencyKey`, `signal`,
 * `timeoutMs` — and resolves to the response body. `client.choose({ slug, choice })`. The positional
 * form (`client.choose(slug, { choice })`) is accepted too.
 *
 * Field types come from the server's own operation schemas (type-only imports: nothing of the server
 * is bundled), so a renamed or retyped field fails the client's compilation.
 */
import type { abstain } from '../operations/abstain.js';
import type { ask } from '../operations/ask.js';
import type { choose } from '../operations/choose.js';
import type { closeRoom } from '../operations/close-room.js';
import type { createRoom } from '../operations/create-room.js';
import type { deleteRoom } from '../operations/delete-room.js';
import type { discuss } from '../operations/discuss.js';
import type { createInvite, listInvites, revokeInvite } from '../operations/invites.js';
import type { joinRoom } from '../operations/join-room.js';
import type { listDecisions } from '../operations/list-decisions.js';
import type { listEvents } from '../operations/list-events.js';
import type { updateMemberRole } from '../operations/members.js';
import type { nextAction } from '../operations/next-action.js';
import type { outcome } from '../operations/outcome.js';
import type { propose } from '../operations/propose.js';
import type { readRoomOperation } from '../operations/read-room.js';
import type { getRoomMachine } from '../operations/room-machine.js';
import type { updateRoomSettings } from '../operations/settings.js';
import type { startChoosing } from '../operations/start-choosing.js';
import type { OperationDef } from '../operations/types.js';
import type { listWebhooks, registerWebhook, unregisterWebhook } from '../operations/webhooks.js';
import type { z } from 'zod';
import { ConclaveError, ConclaveNetworkError } from './errors.js';
import { ROUTES, type RouteSpec } from './routes.js';
import { type RoomEvent, type StreamEventsInput, streamEvents } from './sse.js';
import { type Auth, type CallOptions, DEFAULT_TIMEOUT_MS, Transport } from './transport.js';

export interface ConclaveClientOptions {
  baseUrl: string;
  /** A participant token: the default credential. */
  token?: string;
  /** A mandate (compact JWS): the default credential, with or without a token. */
  mandate?: string;
  /** A hosted key's access token; sent with `mandate`. */
  accessToken?: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Per-request timeout in ms (default 45 s; long-polls raise it to cover their wait). */
  timeoutMs?: number;
  /** Retry 429 and 503 answers, honouring Retry-After (opt-in). */
  retry?: { attempts?: number; maxDelayMs?: number } | boolean;
}

/** A response body, as the service documents it in /v1/openapi.json. */
// biome-ignore lint/suspicious/noExplicitAny: bodies are the documented JSON shapes, read by field
export type Body = Record<string, any>;

type FieldsOf<O> = O extends OperationDef<infer I> ? { [K in keyof I]?: I[K] } : never;
/**
 * The response body of an operation, inferred from its zod output schema. Where the server documents
 * an open object (a view whose fields depend on the caller, docs/agents.md, The REST loop), the body is read by field.
 */
export type ResponseOf<O> = O extends { output: infer S extends z.ZodType } ? OpenOr<z.infer<S>> : Body;
type OpenOr<T> = string extends keyof T ? Body : T;
/** The input of a room-scoped method: its fields, with `slug` required. */
export type RoomInput<O> = Omit<FieldsOf<O>, 'slug'> & { slug: string } & CallOptions;

type Method<O> = {
  (input: RoomInput<O>): Promise<ResponseOf<O>>;
  (slug: string, fields?: Omit<RoomInput<O>, 'slug'>): Promise<ResponseOf<O>>;
};

/** Long-polls never ask for more than this under the default timeout (docs/agents.md, The client library). */
const MAX_DEFAULT_WAIT_SECONDS = 40;

export class ConclaveClient {
  private readonly transport: Transport;

  constructor(options: ConclaveClientOptions) {
    const retry =
      options.retry === true
        ? { attempts: 3, maxDelayMs: 30_000 }
        : options.retry
          ? { attempts: options.retry.attempts ?? 3, maxDelayMs: options.retry.maxDelayMs ?? 30_000 }
          : null;
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.transport = new Transport({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      defaultAuth: defaultAuth(options),
      retry,
    });
  }

  // --- meta -----------------------------------------------------------------------------------

  discover(options: CallOptions = {}): Promise<Body> {
    return this.transport.route(ROUTES.discover, { ...options });
  }

  health(options: CallOptions = {}): Promise<Body> {
    return this.transport.route(ROUTES.health, { ...options });
  }

  /** The service's signing keys (every key ever used), for verifying receipts. */
  jwks(options: CallOptions = {}): Promise<{ keys: unknown[] }> {
    return this.transport.route(ROUTES.jwks, { ...options });
  }

  // --- rooms ----------------------------------------------------------------------------------

  createRoom(input: FieldsOf<typeof createRoom> & CallOptions): Promise<ResponseOf<typeof createRoom>> {
    return this.transport.route(ROUTES.createRoom, input);
  }

  joinRoom = this.method<typeof joinRoom>(ROUTES.joinRoom);
  getRoom = this.method<typeof readRoomOperation>(ROUTES.getRoom);
  /** The room's actors for the state-chart visualizer: current states and the timeline of steps. */
  getRoomMachine = this.method<typeof getRoomMachine>(ROUTES.getRoomMachine);

  /** What changed since `since` (`current_through` of your last read). */
  readDelta(input: { slug: string; since: number } & CallOptions): Promise<Body> {
    return this.transport.route(ROUTES.getRoom, input);
  }

  /** Deletes a room for good; confirms with X-Confirm-Delete (defaults to the slug). */
  deleteRoom(input: RoomInput<typeof deleteRoom> & { confirm?: string }): Promise<ResponseOf<typeof deleteRoom>> {
    const { confirm, ...rest } = input;
    return this.transport.route(ROUTES.deleteRoom, rest, { 'x-confirm-delete': confirm ?? input.slug });
  }

  createInvite = this.method<typeof createInvite>(ROUTES.createInvite);
  listInvites = this.method<typeof listInvites>(ROUTES.listInvites);
  revokeInvite = this.method<typeof revokeInvite>(ROUTES.revokeInvite);
  updateMemberRole = this.method<typeof updateMemberRole>(ROUTES.updateMemberRole);
  updateRoomSettings = this.method<typeof updateRoomSettings>(ROUTES.updateRoomSettings);

  // --- decisions ------------------------------------------------------------------------------

  ask = this.method<typeof ask>(ROUTES.ask);
  startChoosing = this.method<typeof startChoosing>(ROUTES.startChoosing);
  discuss = this.method<typeof discuss>(ROUTES.discuss);
  propose = this.method<typeof propose>(ROUTES.propose);
  choose = this.method<typeof choose>(ROUTES.choose);
  abstain = this.method<typeof abstain>(ROUTES.abstain);
  closeRoom = this.method<typeof closeRoom>(ROUTES.closeRoom);
  listDecisions = this.method<typeof listDecisions>(ROUTES.listDecisions);
  outcome = this.method<typeof outcome>(ROUTES.outcome);

  // --- engagement -----------------------------------------------------------------------------

  /** GET /next-action: waits up to `wait` seconds for what is owed (docs/agents.md, The REST loop). The timeout covers the wait. */
  awaitNextAction: Method<typeof nextAction> = (a: unknown, b?: unknown) => {
    const input = inputOf(a, b);
    const wait = typeof input.wait === 'number' ? input.wait : undefined;
    const explicitTimeout = input.timeoutMs !== undefined;
    const waitSeconds = explicitTimeout || wait !== undefined ? wait : MAX_DEFAULT_WAIT_SECONDS;
    const timeoutMs = input.timeoutMs ?? Math.max(DEFAULT_TIMEOUT_MS, ((waitSeconds ?? 0) + 5) * 1000);
    return this.transport.route(ROUTES.awaitNextAction, {
      ...input,
      ...(waitSeconds !== undefined ? { wait: waitSeconds } : {}),
      timeoutMs,
    });
  };

  listEvents = this.method<typeof listEvents>(ROUTES.listEvents);
  registerWebhook = this.method<typeof registerWebhook>(ROUTES.registerWebhook);
  listWebhooks = this.method<typeof listWebhooks>(ROUTES.listWebhooks);
  unregisterWebhook = this.method<typeof unregisterWebhook>(ROUTES.unregisterWebhook);

  /** The room's events as they happen (SSE), resuming after a dropped connection with no gap. */
  streamEvents(input: StreamEventsInput): AsyncGenerator<RoomEvent> {
    return streamEvents(this.transport.options, input);
  }

  /**
   * Resolves with the room's outcome once decision `decision` (default: the room's oldest open one at
   * the time of the call) is sealed, long-polling `for=completion` in between.
   */
  async waitForOutcome(input: { slug: string; decision?: number; timeoutMs?: number } & CallOptions): Promise<Body> {
    const { slug, decision, timeoutMs, ...options } = input;
    const giveUpAt = Date.now() + (timeoutMs ?? 10 * 60_000);
    const first = await this.outcome({ slug, ...options });
    const target =
      decision ??
      (first.decisions as Body[]).find((d) => d.receipt_hash === null)?.seq ??
      (first.decisions as Body[]).at(-1)?.seq;
    let current = first;
    for (;;) {
      const row = (current.decisions as Body[]).find((d) => d.seq === target);
      if (row === undefined || row.receipt_hash !== null) return current;
      const remaining = Math.floor((giveUpAt - Date.now()) / 1000);
      if (remaining <= 0) throw new ConclaveNetworkError('timeout', `decision ${target} was not sealed in time`);
      await this.awaitNextAction({
        slug,
        for: 'completion',
        since_seq: Math.max(0, target - 1),
        wait: Math.min(remaining, MAX_DEFAULT_WAIT_SECONDS),
        ...options,
      } as RoomInput<typeof nextAction>);
      current = await this.outcome({ slug, ...options });
    }
  }

  /**
   * The rooms the caller holds a seat in (MCP `list_rooms`, docs/agents.md, MCP; it has no REST route), newest
   * first. Uses the token or mandate of `auth` or the client's defaults.
   */
  async listRooms(options: CallOptions = {}): Promise<Body> {
    const auth = options.auth ?? this.transport.options.defaultAuth;
    const token = auth.token ?? auth.bearer;
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'list_rooms',
        arguments: token ? { token } : {},
        ...(auth.mandate ? { _meta: { mandate: auth.mandate } } : {}),
      },
    };
    const answer = await this.transport.send<Body>('POST', '/mcp/host', {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(body),
      options,
    });
    const result = answer?.result;
    if (!result)
      throw new ConclaveError({ code: 'mcp.error', message: answer?.error?.message ?? 'no result', status: 200 });
    if (result.isError) {
      const error = result.structuredContent?.error ?? {};
      throw new ConclaveError({
        code: error.code ?? 'mcp.error',
        message: error.message ?? 'list_rooms failed',
        status: 200,
        hint: error.hint,
        details: error.details,
        requestId: error.request_id,
      });
    }
    return result.structuredContent as Body;
  }

  // --- device authorization (docs/concepts.md, Mandates) --------------------------------------------------------------

  startDeviceAuthorization(input: Record<string, unknown> & CallOptions = {}): Promise<Body> {
    return this.transport.route(
      { method: 'POST', path: '/oauth/device_authorization', source: 'body', mutating: false },
      input,
    );
  }

  pollDeviceToken(input: Record<string, unknown> & CallOptions): Promise<Body> {
    return this.transport.route({ method: 'POST', path: '/oauth/token', source: 'body', mutating: false }, input);
  }

  /** A route as a method taking `(input)` or `(slug, fields)`. */
  private method<O>(spec: RouteSpec): Method<O> {
    return ((a: unknown, b?: unknown) => this.transport.route(spec, inputOf(a, b))) as Method<O>;
  }
}

function inputOf(a: unknown, b?: unknown): Record<string, unknown> {
  if (typeof a === 'string') return { ...((b as Record<string, unknown>) ?? {}), slug: a };
  return { ...((a as Record<string, unknown>) ?? {}) };
}

function defaultAuth(options: ConclaveClientOptions): Auth {
  if (options.accessToken && options.mandate)
    return { hosted: { accessToken: options.accessToken, mandate: options.mandate } };
  return {
    ...(options.token ? { token: options.token } : {}),
    ...(options.mandate ? { mandate: options.mandate } : {}),
  };
}
