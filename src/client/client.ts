/**
 * ConclaveClient: the REST surface as methods (docs/agents.md, The client library). Every method takes one input object — path
 * parameters, the body or query fields, and optionally `auth`, `idempotencyKey`, `signal`,
 * `timeoutMs` — and resolves to the response body. `client.choose({ slug, choice })`. The positional
 * form (`client.choose(slug, { choice })`) is accepted too.
 *
 * Requests and responses are the wire types of `./types/`, generated from the server's operation
 * schemas (scripts/client-types.ts): required fields are required, RoomConfig keys are closed, and
 * nothing of the server reaches the published declarations.
 */
import type { ChooseFields, ChooseScoresFields, PointsMechanism, Retyped } from './ballots.js';
import { ConclaveError, ConclaveNetworkError } from './errors.js';
import { ROUTES, type RouteSpec } from './routes.js';
import { type StreamedEvent, type StreamEventsInput, streamEvents } from './sse.js';
import { type Auth, type CallOptions, DEFAULT_TIMEOUT_MS, pause, type RetryPolicy, Transport } from './transport.js';
import type * as W from './types/index.js';

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
  /**
   * Opt-in retries (`true`: 3 of them): 429 and 503 answers after their Retry-After, and network
   * errors (no answer at all) on requests that are safe to repeat — GETs, and mutations with an
   * Idempotency-Key — after an exponential backoff with jitter. `sleep` and `random` replace the
   * timer and the jitter (deterministic tests).
   */
  retry?: boolean | Partial<RetryPolicy>;
}

/** Any JSON object, read by field (the CLI prints bodies generically). */
// biome-ignore lint/suspicious/noExplicitAny: a body of any operation, read by field
export type Body = Record<string, any>;

/** The input of a room-scoped method: its fields, the room's `slug`, and the call options. */
export type RoomInput<Fields = object> = W.RoomPath & Fields & CallOptions;

/** A room-scoped method: `(input)` with `slug` inside, or `(slug, fields)`. */
export type RoomMethod<Fields, Response> = {
  (input: RoomInput<Fields>): Promise<Response>;
  (
    slug: string,
    ...fields: object extends Fields ? [fields?: Fields & CallOptions] : [fields: Fields & CallOptions]
  ): Promise<Response>;
};

/** `getRoom` answers the agent view, the full state with `include: 'full'`, or a delta with `since`. */
export interface GetRoom {
  (input: RoomInput<W.GetRoomRequest & { include: 'full' }>): Promise<W.RoomState>;
  (input: RoomInput<W.GetRoomRequest & { since: number }>): Promise<W.RoomDelta>;
  (input: RoomInput<W.GetRoomRequest & { include?: undefined }>): Promise<W.AgentRoomView>;
  (slug: string, fields: W.GetRoomRequest & { include: 'full' } & CallOptions): Promise<W.RoomState>;
  (slug: string, fields?: CallOptions): Promise<W.AgentRoomView>;
}

/**
 * `choose`, its ballot typed by the room's mechanism when the call names it (`mechanism`, or the
 * type argument): a shape that mechanism refuses does not compile (src/client/ballots.ts). One
 * signature per ballot field, so an editor shows each field's description.
 */
export interface Choose {
  <M extends W.Mechanism = W.Mechanism>(input: RoomInput<ChooseFields<M>>): Promise<W.ChooseResponse>;
  <M extends PointsMechanism = PointsMechanism>(input: RoomInput<ChooseScoresFields<M>>): Promise<W.ChooseResponse>;
  <M extends W.Mechanism = W.Mechanism>(slug: string, fields: ChooseFields<M> & CallOptions): Promise<W.ChooseResponse>;
  <M extends PointsMechanism = PointsMechanism>(
    slug: string,
    fields: ChooseScoresFields<M> & CallOptions,
  ): Promise<W.ChooseResponse>;
}

/**
 * createRoom's input with `Text` (the question or the about text) given: one signature each, so an
 * editor shows every field's description, and a room with neither does not compile.
 */
type RoomAround<Text extends 'question' | 'about'> = Omit<W.CreateRoomRequest, 'question' | 'about'> &
  Retyped<Pick<W.CreateRoomRequest, Text>, string> &
  Pick<W.CreateRoomRequest, Exclude<'question' | 'about', Text>> &
  CallOptions;

/** Long-polls never ask/** Long-polls never ask for more than this under the default timeout (docs/agents.md, The REST loop). */
const MAX_DEFAULT_WAIT_SECONDS = 40;

export class ConclaveClient {
  private readonly transport: Transport;

  constructor(options: ConclaveClientOptions) {
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.transport = new Transport({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      defaultAuth: defaultAuth(options),
      retry: retryPolicy(options.retry),
    });
  }

  // --- meta -----------------------------------------------------------------------------------

  discover(options: CallOptions = {}): Promise<W.ServiceDocument> {
    return this.transport.route(ROUTES.discover, { ...options });
  }

  health(options: CallOptions = {}): Promise<W.Health> {
    return this.transport.route(ROUTES.health, { ...options });
  }

  /** The service's signing keys (every key ever used), for verifying receipts. */
  jwks(options: CallOptions = {}): Promise<W.JsonWebKeySet> {
    return this.transport.route(ROUTES.jwks, { ...options });
  }

  // --- rooms ----------------------------------------------------------------------------------

  /** A room around a question (its first decision opens at once), an about text, or both. */
  createRoom(input: RoomAround<'question'>): Promise<W.CreateRoomResponse>;
  createRoom(input: RoomAround<'about'>): Promise<W.CreateRoomResponse>;
  createRoom(input: W.CreateRoomRequest & CallOptions): Promise<W.CreateRoomResponse> {
    return this.transport.route(ROUTES.createRoom, input);
  }

  joinRoom: RoomMethod<W.JoinRoomRequest, W.JoinRoomResponse> = this.method(ROUTES.joinRoom);
  getRoom: GetRoom = this.method(ROUTES.getRoom) as GetRoom;
  /** The room's actors for the state-chart visualizer: current states and the timeline of steps. */
  getRoomMachine: RoomMethod<object, W.RoomMachine> = this.method(ROUTES.getRoomMachine);

  /** What changed since `since` (`current_through` of your last read). */
  readDelta(input: RoomInput<W.GetRoomRequest & { since: number }>): Promise<W.RoomDelta> {
    return this.transport.route(ROUTES.getRoom, input);
  }

  /** Deletes a room for good; confirms with X-Confirm-Delete (defaults to the slug). */
  deleteRoom(
    input: RoomInput<{
      /** Sent as X-Confirm-Delete: the slug of the room to delete, as a guard against a wrong slug (default: the slug). */
      confirm?: string;
    }>,
  ): Promise<W.DeleteRoomResponse> {
    const { confirm, ...rest } = input;
    return this.transport.route(ROUTES.deleteRoom, rest, { 'x-confirm-delete': confirm ?? input.slug });
  }

  createInvite: RoomMethod<W.CreateInviteRequest, W.CreateInviteResponse> = this.method(ROUTES.createInvite);
  listInvites: RoomMethod<object, W.ListInvitesResponse> = this.method(ROUTES.listInvites);
  revokeInvite: RoomMethod<W.RevokeInvitePath, W.RevokeInviteResponse> = this.method(ROUTES.revokeInvite);
  updateMemberRole: RoomMethod<W.UpdateMemberRoleRequest & W.UpdateMemberRolePath, W.UpdateMemberRoleResponse> =
    this.method(ROUTES.updateMemberRole);
  updateRoomSettings: RoomMethod<W.UpdateRoomSettingsRequest, W.UpdateRoomSettingsResponse> = this.method(
    ROUTES.updateRoomSettings,
  );

  // --- decisions ------------------------------------------------------------------------------

  ask: RoomMethod<W.AskRequest, W.AskResponse> = this.method(ROUTES.ask);
  startChoosing: RoomMethod<W.StartChoosingRequest, W.StartChoosingResponse> = this.method(ROUTES.startChoosing);
  discuss: RoomMethod<W.DiscussRequest, W.DiscussResponse> = this.method(ROUTES.discuss);
  propose: RoomMethod<W.ProposeRequest, W.ProposeResponse> = this.method(ROUTES.propose);
  /** Submits or revises your ballot; `mechanism` (never sent) types it by the room's mechanism. */
  choose: Choose = (a: unknown, b?: unknown) => {
    const { mechanism: _typesOnly, ...input } = inputOf(a, b);
    return this.transport.route<W.ChooseResponse>(ROUTES.choose, input);
  };
  abstain: RoomMethod<W.AbstainRequest, W.AbstainResponse> = this.method(ROUTES.abstain);
  closeRoom: RoomMethod<W.CloseRoomRequest, W.CloseRoomResponse> = this.method(ROUTES.closeRoom);
  listDecisions: RoomMethod<object, W.ListDecisionsResponse> = this.method(ROUTES.listDecisions);
  /** The room's decisions with their receipts, in chain order: what `verifyRoomReceiptChain` checks. */
  outcome: RoomMethod<object, W.Outcome> = this.method(ROUTES.outcome);

  // --- engagement -----------------------------------------------------------------------------

  /** GET /next-action: waits up to `wait` seconds for what is owed (docs/agents.md, The REST loop). The timeout covers the wait. */
  awaitNextAction: RoomMethod<W.AwaitNextActionRequest, W.AwaitNextActionResponse> = (a: unknown, b?: unknown) => {
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

  listEvents: RoomMethod<W.ListEventsRequest, W.ListEventsResponse> = this.method(ROUTES.listEvents);
  registerWebhook: RoomMethod<W.RegisterWebhookRequest, W.RegisterWebhookResponse> = this.method(
    ROUTES.registerWebhook,
  );
  listWebhooks: RoomMethod<object, W.ListWebhooksResponse> = this.method(ROUTES.listWebhooks);
  unregisterWebhook: RoomMethod<W.UnregisterWebhookPath, W.UnregisterWebhookResponse> = this.method(
    ROUTES.unregisterWebhook,
  );

  /**
   * Every stored event of the room after `since_seq` (or `since_event_id`), oldest first, one page
   * (`limit`, default 100) at a time: `for await (const event of client.paginateEvents({ slug }))`.
   * Ends at the newest event; breaking out of the loop stops fetching.
   */
  async *paginateEvents(input: RoomInput<W.ListEventsRequest>): AsyncGenerator<W.RoomEvent> {
    let page: RoomInput<W.ListEventsRequest> = input;
    for (;;) {
      const { events, has_more } = await this.listEvents(page);
      yield* events;
      const last = events.at(-1);
      if (!has_more || last === undefined) return;
      const { since_event_id: _cursor, ...rest } = page;
      page = { ...rest, since_seq: last.seq };
    }
  }

  /** The room's events as they happen (SSE), resuming after a dropped connection with no gap. */
  streamEvents(input: StreamEventsInput): AsyncGenerator<StreamedEvent> {
    return streamEvents(this.transport.options, input);
  }

  /**
   * Resolves with the room's outcome once decision `decision` (default: the room's oldest open one at
   * the time of the call) is sealed, long-polling `for=completion` in between; once a later decision
   * is sealed first, that wait would answer at once every time, so it follows the event stream instead.
   */
  async waitForOutcome(
    input: RoomInput<{
      /** The decision number (its room-local seq) to wait for; default: the oldest open one when called. */
      decision?: number;
    }>,
  ): Promise<W.Outcome> {
    const { slug, decision, timeoutMs, ...options } = input;
    const giveUpAt = Date.now() + (timeoutMs ?? 10 * 60_000);
    const first = await this.outcome({ slug, ...options });
    const target = decision ?? first.decisions.find((d) => d.receipt_hash === null)?.seq ?? first.decisions.at(-1)?.seq;
    let current = first;
    for (;;) {
      const row = current.decisions.find((d) => d.seq === target);
      if (target === undefined || row === undefined || row.receipt_hash !== null) return current;
      const remaining = Math.floor((giveUpAt - Date.now()) / 1000);
      if (remaining <= 0) throw new ConclaveNetworkError('timeout', `decision ${target} was not sealed in time`);
      if (current.decisions.some((d) => d.seq > target && d.receipt_hash !== null)) {
        current = await this.outcomeOnStream(slug, target, giveUpAt, options);
        continue;
      }
      await this.awaitNextAction({
        slug,
        for: 'completion',
        since_seq: Math.max(0, target - 1),
        wait: Math.min(remaining, MAX_DEFAULT_WAIT_SECONDS),
        ...options,
      });
      current = await this.outcome({ slug, ...options });
    }
  }

  /**
   * The outcome once decision `target` is sealed or the deadline passes, from the room's event stream:
   * opened after the head read before the outcome, so a seal in between is on the stream.
   */
  private async outcomeOnStream(
    slug: string,
    target: number,
    giveUpAt: number,
    options: CallOptions,
  ): Promise<W.Outcome> {
    const { current_through } = (await this.getRoom({ slug, ...options })) as { current_through: number };
    let current = await this.outcome({ slug, ...options });
    const sealed = () => current.decisions.find((d) => d.seq === target)?.receipt_hash != null;
    if (sealed()) return current;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(onAbort, Math.max(0, giveUpAt - Date.now()));
    try {
      for await (const { event } of this.streamEvents({
        slug,
        ...options,
        since_seq: current_through,
        signal: stop.signal,
      })) {
        if (event !== 'decision.completed') continue;
        current = await this.outcome({ slug, ...options });
        if (sealed()) return current;
      }
      return current;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  /**
   * The rooms the caller holds a seat in (MCP `list_rooms`, docs/agents.md, MCP; it has no REST route), newest
   * first. Uses the token or mandate of `auth` or the client's defaults.
   */
  async listRooms(options: CallOptions = {}): Promise<W.ListRoomsResponse> {
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
    return result.structuredContent as W.ListRoomsResponse;
  }

  // --- device authorization (docs/concepts.md, Mandates) --------------------------------------------------------------

  startDeviceAuthorization(input: W.DeviceAuthorizationRequest & CallOptions): Promise<W.DeviceAuthorization> {
    return this.transport.route(
      { method: 'POST', path: '/oauth/device_authorization', source: 'body', mutating: false },
      input,
    );
  }

  /** Rejects with ConclaveError code `authorization_pending` or `slow_down` until the operator approves. */
  pollDeviceToken(input: W.DeviceTokenRequest & CallOptions): Promise<W.DeviceToken> {
    return this.transport.route({ method: 'POST', path: '/oauth/token', source: 'body', mutating: false }, input);
  }

  /** A route as a method taking `(input)` or `(slug, fields)`. */
  private method<Fields, Response>(spec: RouteSpec): RoomMethod<Fields, Response> {
    return ((a: unknown, b?: unknown) => this.transport.route(spec, inputOf(a, b))) as RoomMethod<Fields, Response>;
  }
}

function inputOf(a: unknown, b?: unknown): Record<string, unknown> {
  if (typeof a === 'string') return { ...((b as Record<string, unknown>) ?? {}), slug: a };
  return { ...((a as Record<string, unknown>) ?? {}) };
}

function retryPolicy(retry: ConclaveClientOptions['retry']): RetryPolicy | null {
  if (!retry) return null;
  const chosen = retry === true ? {} : retry;
  return {
    attempts: chosen.attempts ?? 3,
    maxDelayMs: chosen.maxDelayMs ?? 30_000,
    baseDelayMs: chosen.baseDelayMs ?? 250,
    sleep: chosen.sleep ?? pause,
    random: chosen.random ?? Math.random,
  };
}

function defaultAuth(options: ConclaveClientOptions): Auth {
  if (options.accessToken && options.mandate)
    return { hosted: { accessToken: options.accessToken, mandate: options.mandate } };
  return {
    ...(options.token ? { token: options.token } : {}),
    ...(options.mandate ? { mandate: options.mandate } : {}),
  };
}
