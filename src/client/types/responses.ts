/** What each REST operation answers (2xx bodies), by operation. */
import type { Mechanism, RoomConfig } from './config.js';
import type {
  DecisionOpening,
  DecisionStatus,
  DecisionSummary,
  RoomEvent,
  RoomInvite,
  RoomStatus,
  Role,
} from './views.js';

export interface CreateRoomResponse {
  slug: string;
  url: string;
  /** The creator's token: keep it secret, it is the seat. */
  creator_token: string;
  participant_id: string;
  about: string | null;
  voting_ends_at: string | null;
  expires_at: null;
  owner_principal_id: string | null;
  config: RoomConfig;
  /** The first decision, or null when none was opened. */
  decision: DecisionSummary | null;
}

export interface JoinRoomResponse {
  ok: true;
  slug: string;
  url: string;
  participant_id: string;
  /** The seat's token; null for mandate seats (the mandate is presented on every call). */
  participant_token: string | null;
  display_name: string;
  role: Role;
  agent_did?: string;
  /** The seat already existed and was recovered. */
  recovered?: true;
  about: string | null;
  status: RoomStatus;
  current_through: number;
}

/** A just-opened decision. */
export interface AskedDecision extends DecisionOpening {
  voting_opens_at: string | null;
  voting_ends_at: string | null;
  /** The chain head when it opened. */
  prev_hash: string | null;
  status: 'proposing' | 'voting';
  agreement?: true;
}

export interface AskResponse {
  ok: true;
  slug: string;
  decision: AskedDecision;
}

export interface StartChoosingResponse {
  ok: true;
  slug: string;
  decision: {
    id: string;
    seq: number;
    options: string[];
    voting_opens_at: string | null;
    voting_ends_at: string | null;
    status: 'voting';
  };
  /** Choosing was already open. */
  already_open?: true;
}

export interface DiscussResponse {
  ok: true;
  /** The message id. */
  id: string;
}

export interface ProposeResponse {
  slug: string;
  decision: number;
  accepted: boolean;
  options: string[];
  choosing_open: boolean;
  /** Why it was not accepted. */
  reason?: string;
}

export interface ChooseResponse {
  ok: true;
  slug: string;
  decision: number;
  /** The ballot as recorded. */
  cast_choice: unknown;
  revised: boolean;
  status: string;
  resolved_winner: string | null;
  resolved_outcome: string | null;
  agreement?: true;
  settling?: { seals_in_seconds: number; presumptive: string | null };
}

export interface AbstainResponse {
  ok: true;
  slug: string;
  decision: number;
  abstained: true;
  reason: string;
  status: string;
  resolved_winner: string | null;
  resolved_outcome: string | null;
}

export interface CloseRoomResponse {
  ok: true;
  slug: string;
  status: 'concluded';
  concluded_at: string;
  closing_statement: string | null;
  receipt_hash: string;
  prev_hash: string | null;
}

export interface DeleteRoomResponse {
  ok: true;
  deleted_room_slug: string;
}

export interface CreateInviteResponse {
  slug: string;
  about: string | null;
  invite: RoomInvite;
  /** Shown once: hand it to the invitee. */
  invite_token: string;
  join_url: string;
  join_command: string;
  /** A block to paste into the invitee's context. */
  paste_block: string;
}

export interface ListInvitesResponse {
  slug: string;
  invites: RoomInvite[];
}

export interface RevokeInviteResponse {
  slug: string;
  invite: RoomInvite;
}

export interface UpdateMemberRoleResponse {
  slug: string;
  participant: { id: string; display_name: string; role: Role };
}

export interface UpdateRoomSettingsResponse {
  slug: string;
  config: RoomConfig;
  /** The keys that changed. */
  changed: (keyof RoomConfig)[];
}

export interface ListDecisionsResponse {
  slug: string;
  decisions: DecisionSummary[];
}

export interface ListEventsResponse {
  slug: string;
  events: RoomEvent[];
  /** More events follow the last one: ask again after its seq. */
  has_more: boolean;
}

/** A decision as a wait reports it. */
export interface WaitDecision {
  id: string;
  seq: number;
  question: string;
  options: string[];
  voting_ends_at: string | null;
  status: DecisionStatus;
  agreement?: true;
  /** Once resolved. */
  resolved_outcome?: string | null;
  resolved_winner?: string | null;
  receipt_hash?: string | null;
}

/** GET /next-action (docs/agents.md, The REST loop), by `status`. */
export type AwaitNextActionResponse =
  | {
      status: 'actionable';
      for: 'my_choice' | 'completion';
      decision: WaitDecision;
      also_actionable?: WaitDecision[];
    }
  | {
      status: 'activity';
      for: 'activity';
      event: { seq: number; type: string; who: string | null };
    }
  | {
      status: 'timeout';
      for: 'my_choice' | 'completion' | 'activity';
      next_poll_at: string;
      /** What to do now: usually, wait again. */
      hint: string;
    };

export interface RegisterWebhookResponse {
  ok: true;
  webhook_id: string;
  /** Shown once: verifies the deliveries' signatures (Standard Webhooks). */
  signing_secret: string;
  url: string;
  event_types: string[];
}

export interface Webhook {
  id: string;
  url: string;
  event_types: string[];
  created_at: string;
  disabled_at: string | null;
}

export interface ListWebhooksResponse {
  slug: string;
  webhooks: Webhook[];
}

export interface UnregisterWebhookResponse {
  ok: true;
}

/** A room the caller holds a seat in (MCP `list_rooms`). */
export interface SeatedRoom {
  slug: string;
  url: string;
  about: string | null;
  status: RoomStatus;
  role: Role;
  created_at: string | null;
  joined_at: string | null;
}

export interface ListRoomsResponse {
  rooms: SeatedRoom[];
}

/** A state chart of the visualizer. */
export interface StateChart {
  id: string;
  initial: string;
  states: {
    id: string;
    name: string;
    parent: string | null;
    compound: boolean;
    initial: string | null;
    transient: boolean;
  }[];
  transitions: { id: string; source: string; target: string; event: string; guard: string | null }[];
}

/** GET /api/rooms/{slug}/machine: the room's actors for the state-chart visualizer. */
export interface RoomMachine {
  slug: string;
  current_through: number;
  charts: { room: StateChart; decision: StateChart };
  room: { state: string; active: string[] };
  decisions: { state: string; active: string[]; decision_id: string; seq: number; question: string }[];
  timeline: {
    seq: number;
    event_id: string;
    event_type: string;
    occurred_at: string;
    decision_id: string | null;
    chart: 'room' | 'decision';
    from: string | null;
    to: string;
    cause: string;
  }[];
  timeline_truncated: boolean;
}

/** A JSON Web Key Set: the service's receipt-signing keys, every key ever used. */
export interface JsonWebKeySet {
  keys: { kty: string; crv?: string; x?: string; kid?: string; [member: string]: unknown }[];
}

/** GET /.well-known/svc.json (docs/agents.md, Mandates). */
export interface ServiceDocument {
  protocol_version: string;
  protocol_label: string;
  issuer_id: string;
  name: string;
  purpose: string;
  operator: { name: string; contact: string };
  transports: { rest: string; mcp?: string; mcp_host?: string; mcp_protocol_versions?: string[] };
  auth: {
    auth_modes: ('token' | 'mandate')[];
    mandate_required: boolean;
    mandate_alg: string[];
    oauth_resource_metadata?: string;
  };
  mechanisms_supported: Mechanism[];
  mandate_actions: string[];
  room_kind: string;
  visibility: RoomConfig['visibility'][];
  deliberation_modes_supported: RoomConfig['deliberation_mode'][];
  long_running_pattern: 'webhook' | 'poll';
  supports_long_poll: boolean;
  long_poll_max_wait_seconds?: number;
  supports_sse_upgrade: boolean;
  default_voting_window_seconds: number;
  room_config_defaults: RoomConfig;
  room_retention: { policy: string };
  membership_rule: { kind: string };
  keys: JsonWebKeySet['keys'];
  jwks_url: string;
  revocations: unknown[];
  openapi_url: string;
  conformance: {
    self_attested: boolean;
    validated: boolean;
    validated_at: string | null;
    validated_against: string | null;
  };
}

/** GET /healthz. */
export interface Health {
  status: 'ok' | 'degraded';
  version: string;
  checks: { store: 'ok' | 'fail'; signing_key: 'ok' | 'fail' };
}

/** POST /oauth/device_authorization. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  /** Seconds. */
  expires_in: number;
  /** Seconds between polls. */
  interval: number;
}

/** POST /oauth/token once approved: a hosted key and its mandate. */
export interface DeviceToken {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
  scope: string;
  resource: string | null;
  mandate: string;
  public_id: string;
}
