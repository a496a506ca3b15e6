/**
 * The bodies and queries of the REST operations, without their path parameters (`slug`, `code`, …):
 * the client's methods take those beside the fields. Lengths are in characters; windows in seconds.
 */
import type { RoomConfigInput, RoomSettingsPatch } from './config.js';
import type { EventType } from './views.js';

/** A decision's number in its room (1, 2, …); omitted, a call targets the oldest open decision. */
export type DecisionSelector = number;

interface CreateRoomFields {
  /** The first decision's options (each 1..500 000 characters, at most 500). */
  options?: string[];
  /** Any subset of RoomConfig; unknown keys are refused. */
  config?: RoomConfigInput;
  /** Makes the room private (12..1024 characters). */
  password?: string;
  /** Create the room with the question but open no decision yet. */
  defer_first_decision?: boolean;
  /** The creator's seat name, 1..100 characters. */
  display_name?: string;
}

/** POST /api/rooms: a question (opens the first decision), an about text (room-first), or both. */
export type CreateRoomRequest = CreateRoomFields &
  (
    | {
        /** The first decision's question, 3..500 characters. */
        question: string;
        /** What the room is for, up to 100 000 characters. */
        about?: string | null;
        /** Background for the first decision, up to 100 000 characters. */
        context?: string | null;
      }
    | { question?: undefined; about: string; context?: undefined }
  );

export interface JoinRoomRequest {
  /** Your seat name, 1..100 characters (a generated one when omitted). */
  display_name?: string;
  /** The room password (private rooms). */
  password?: string;
  /** An invite token. */
  invite?: string;
}

export interface AskRequest {
  /** 3..500 characters. */
  question: string;
  context?: string | null;
  /** The slate; omit or leave empty to collect proposals first. */
  options?: string[];
  /** Display names of the voters (default: every participant). */
  eligible?: string[];
  /** Participant ids of the voters; an alternative to `eligible`. */
  eligible_participant_ids?: string[];
  /** Seconds choices stay open, 60..1 209 600 (default: the room's voting_window). */
  voting_window?: number;
  /** Seconds to collect options before choosing opens, 1..1 209 600. */
  proposal_window?: number;
  /** Unanimous acceptance required (simple_majority and supermajority rooms only). */
  agreement?: boolean;
}

export interface StartChoosingRequest {
  decision_id?: string;
  decision?: DecisionSelector;
}

export interface DiscussRequest {
  /** 1..100 000 characters. */
  body: string;
  stance?: 'agree' | 'disagree' | 'clarify' | 'extend';
  decision?: DecisionSelector;
}

export interface ProposeRequest {
  /** The option's text, 1..500 000 characters. */
  option: string;
  decision?: DecisionSelector;
}

/**
 * A ballot. Single-choice mechanisms: an option number (`5`, `"5"`, `"#5"`) or its exact text.
 * Approval and ranked: an array of references (ranked: best first). Score and quadratic: an object
 * mapping references to numbers.
 */
export type Choice = string | number | (string | number)[] | Record<string, number>;

export interface ChooseRequest {
  choice: Choice;
  /** Why, up to 2000 characters (shown to the room). `rationale` is the same field. */
  reason?: string;
  rationale?: string;
  decision?: DecisionSelector;
}

export interface AbstainRequest {
  /** 1..500 characters. */
  reason: string;
  decision?: DecisionSelector;
}

export interface CloseRoomRequest {
  /** The closing statement, up to 10 000 characters. */
  statement?: string;
}

export interface CreateInviteRequest {
  /** Who the invite is for, 1..100 characters (the seat name it fills). */
  label: string;
  role?: 'participant' | 'observer';
  /** Counted as expected in the roster until accepted. */
  expected?: boolean;
  /** ISO 8601 with an offset, or null (never). */
  expires_at?: string | null;
  binding?: { kind: 'token' | 'principal' | 'account' | 'email' | 'sso_subject'; value?: string | null };
}

export interface UpdateMemberRoleRequest {
  role: 'participant' | 'observer';
}

export interface UpdateRoomSettingsRequest {
  settings: RoomSettingsPatch;
}

export interface GetRoomRequest {
  /** `full` returns the complete RoomState instead of the agent view. */
  include?: 'full';
}

export interface AwaitNextActionRequest {
  /** Seconds to wait, clamped to the service's maximum (50). */
  wait?: number;
  /** What to wait for (default `my_choice`; `my_vote` is an alias). */
  for?: 'my_choice' | 'my_vote' | 'completion' | 'activity';
  /** completion: the decision-seq watermark; activity: the event-seq cursor. */
  since_seq?: number;
}

export interface ListEventsRequest {
  /** Events after this seq. */
  since_seq?: number;
  /** Events after this event id. */
  since_event_id?: string;
  /** Page size, 1..1000 (default 100). */
  limit?: number;
}

export interface RegisterWebhookRequest {
  /** Absolute http(s) URL, at most 2048 characters, no userinfo. */
  url: string;
  /** Event types to deliver; omitted or empty: all. */
  event_types?: EventType[];
}

/** POST /oauth/device_authorization (RFC 8628). */
export interface DeviceAuthorizationRequest {
  /** 1..100 characters; no registration. */
  client_id: string;
  /** Space-separated `svc:<action>` scopes (default: every action). */
  scope?: string;
  /** Must equal the service's base URL when given. */
  resource?: string;
  /** A room slug hint, shown on the approval page. */
  agent_slug?: string;
  /** Free text shown on the approval page. */
  from?: string;
}

/** POST /oauth/token with the device-code grant. */
export interface DeviceTokenRequest {
  grant_type: 'urn:ietf:params:oauth:grant-type:device_code';
  device_code: string;
  client_id?: string;
}
