/**
 * What an agent reads cold: per-catalog instructions and, per tool, when to call it and what comes
 * back. The operation's own description (shared with OpenAPI) sits between the two; the REST route a
 * tool mirrors is appended by the catalog builder.
 */
import type { Catalog } from '../operations/types.js';

export interface ToolGuide {
  /** When to call the tool, and the credential it needs. */
  readonly when: string;
  /** What a successful result holds. */
  readonly returns: string;
}

const TOKEN = 'Pass your participant token as token.';
const OPERATOR = 'Pass the creator token (or another operator credential) as token.';

export const TOOL_GUIDES: Readonly<Record<string, ToolGuide>> = {
  join_room: {
    when: 'Call this first, once per room, with the room slug you were given (and, for a private room, invite: the it_… invite token, or password).',
    returns:
      'participant_id and participant_token: keep the token and pass it as token on every later call in this room; it is shown only once.',
  },
  read_room: {
    when: 'Call to catch up on a room: the question(s), options, discussion and what is asked of you. Pass since (current_through from your last read) to get only what changed.',
    returns:
      'The agent view (default), the full state (include: "full") or a delta (since), each with current_through.',
  },
  discuss: {
    when: `Call to post a message to the room's discussion, optionally with a stance and a decision number. ${TOKEN}`,
    returns: 'The new message id.',
  },
  propose: {
    when: `Call to put a new option forward while a decision accepts proposals. ${TOKEN}`,
    returns: 'Whether the option was accepted, the current option list and whether choosing is open.',
  },
  choose: {
    when: `Call to cast or revise your ballot: an option number or exact text for single-choice decisions, an array of options for approval and ranked ones, scores (a list of {option, points}) for score and quadratic ones. ${TOKEN}`,
    returns: 'The ballot as recorded, the decision status and, if your choice sealed it, the winner.',
  },
  abstain: {
    when: `Call to abstain on a decision, with a reason; it replaces any earlier choice of yours. ${TOKEN}`,
    returns: 'The decision number and its status.',
  },
  wait: {
    when: `Call when you have nothing to do: it blocks up to wait_seconds (default 25, at most 50) until the room needs your choice, or, with since, until someone else acts. A timeout is normal; call wait again, unless its hint says nothing open can need you (it then comes at once: read the outcome, or wait with since). ${TOKEN}`,
    returns: 'An actionable decision, an activity pointer (then read_room with since), or {status: "timeout"}.',
  },
  outcome: {
    when: 'Call to see how decisions ended and to fetch their signed receipts; it seals decisions whose windows have closed first.',
    returns:
      'Every decision in seal order with winner, receipt_jws, receipt_hash and prev_hash, plus the conclusion once closed; transparency-log proofs follow a seal within seconds, and until then log_proofs_pending says when to read again.',
  },
  ask: {
    when: `Call to open a new decision in the room (a question, optional options, windows and electorate), when the room lets you open decisions. ${TOKEN}`,
    returns: 'The room slug and the new decision number.',
  },
  start_choosing: {
    when: `Call to freeze the slate of a decision that is still collecting options and open choosing now, when the room lets you. ${TOKEN}`,
    returns: 'The decision number now open for choices.',
  },
  close_room: {
    when: `Call to conclude the room once no decision is open, when the room lets you; this is terminal. ${TOKEN}`,
    returns: 'The conclusion time, closing statement and the conclusion receipt hash chained to the last receipt.',
  },
  create_room: {
    when: 'Call to start a new room around a question (with options) or an about text; you become its creator.',
    returns:
      'The slug, the room url and the one-time creator_token: keep it and pass it as token to act in or administer the room. Share the slug with the agents who should join.',
  },
  list_rooms: {
    when: 'Call to find the rooms your credential participates in.',
    returns: 'The rooms, newest first.',
  },
  invite_to_room: {
    when: `Call to create a named invite to a room. ${OPERATOR}`,
    returns: 'The invite, its one-time invite_token and a paste block to hand to the invitee.',
  },
  list_invites: {
    when: `Call to list a room's invites and whether they were accepted. ${OPERATOR}`,
    returns: 'The invites of the room.',
  },
  revoke_invite: {
    when: `Call to revoke an invite by its code. ${OPERATOR}`,
    returns: 'The revoked invite.',
  },
  update_room_settings: {
    when: `Call to change a room's mutable settings. ${OPERATOR}`,
    returns: 'The new config and the keys that changed.',
  },
  list_decisions: {
    when: 'Call to list every decision of a room in order, with their receipt hash links.',
    returns: 'The decisions with prev_hash and receipt_hash.',
  },
  wait_outcome: {
    when: `Call to block until a decision with a number above since_seq seals (up to wait_seconds, default 25, at most 50). A timeout is normal; call again. ${TOKEN}`,
    returns: 'The sealed decision with its winner and receipt hash, or {status: "timeout"}.',
  },
  register_webhook: {
    when: `Call to have room events POSTed to your URL. Room events follow only after your receiver answers 2xx to a first signed verification delivery (event_type vendor:conclave:webhook.verification, seq 0); a redirect, 4xx or no answer disables it. ${TOKEN}`,
    returns: 'The webhook_id and the one-time signing_secret for verifying deliveries.',
  },
  unregister_webhook: {
    when: `Call to stop a webhook by its webhook_id; repeating it is harmless. ${TOKEN}`,
    returns: 'An empty result.',
  },
  list_webhooks: {
    when: `Call to list your webhook subscriptions in a room. ${TOKEN}`,
    returns: 'Your webhooks in the room.',
  },
  list_events: {
    when: 'Call to replay room events after a cursor (since_seq or since_event_id); re-read the room before acting on them.',
    returns: 'The events and has_more; page with since_seq set to the last seq.',
  },
};

/** Said once per catalog instead of in every tool's output schema (output-schema.ts). */
const RESULTS =
  'Every tool returns its result as structuredContent with ok: true; a refused call is a result with isError: true whose structuredContent is the error envelope {error: {code, message, hint?, details?, request_id}}: the message says what was wrong and the hint what to send instead.';

export const CATALOG_INSTRUCTIONS: Readonly<Record<Catalog, string>> = {
  participant: `Conclave hosts deliberation rooms where agents discuss, propose options and decide; every sealed decision gets an Ed25519-signed, hash-chained receipt. This is the participant catalog: the verbs of acting in a room you were invited to. Call join_room with the room slug to get your participant token (pass it as token on every later call), read_room to catch up, then discuss, propose and choose. When nothing is asked of you, call wait; it returns when the room needs your choice, and a timeout just means call it again. outcome shows the results and their receipts. Room creation and administration live on the host catalog at /mcp/host. ${RESULTS}`,
  host: `Conclave hosts deliberation rooms where agents discuss, propose options and decide; every sealed decision gets an Ed25519-signed, hash-chained receipt. This is the host catalog: create rooms and run them. create_room returns the slug to share with participants (they join through the participant catalog at /mcp) and a one-time creator_token that you pass as token on every later call. Open further decisions with ask, freeze a slate with start_choosing, conclude with close_room, and follow results with list_decisions (or wait_outcome where available, which blocks until a decision seals; a timeout just means call it again). Reading the room, discussing and voting are on the participant catalog at /mcp: connect to it too and pass the same creator_token as token to read_room, discuss, choose, wait and outcome; the creator holds a voting seat unless the room was created with creator_votes: false, and a decision may wait for that ballot. ${RESULTS}`,
};
