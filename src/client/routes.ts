/**
 * The REST routes the client calls, by method name. A test compares this table with the server's
 * operation table (method, path, where the fields go, whether it mutates), so the two cannot drift.
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** Where fields other than path parameters go. */
  source: 'body' | 'query' | 'none';
  /** Mutations send an Idempotency-Key. */
  mutating: boolean;
  /** The server's operation name (operationId), for the drift test; absent for meta and OAuth routes. */
  operation?: string;
}

const body = (path: string, operation: string, method: RouteSpec['method'] = 'POST'): RouteSpec => ({
  method,
  path,
  source: 'body',
  mutating: true,
  operation,
});
const read = (path: string, operation: string): RouteSpec => ({
  method: 'GET',
  path,
  source: 'query',
  mutating: false,
  operation,
});

export const ROUTES = {
  createRoom: body('/api/rooms', 'createRoom'),
  getRoom: read('/api/rooms/{slug}', 'getRoom'),
  getRoomMachine: read('/api/rooms/{slug}/machine', 'getRoomMachine'),
  deleteRoom: { method: 'DELETE', path: '/api/rooms/{slug}', source: 'none', mutating: true, operation: 'deleteRoom' },
  joinRoom: body('/api/rooms/{slug}/join', 'joinRoom'),
  ask: body('/api/rooms/{slug}/ask', 'ask'),
  startChoosing: body('/api/rooms/{slug}/start-choosing', 'startChoosing'),
  discuss: body('/api/rooms/{slug}/discuss', 'discuss'),
  propose: body('/api/rooms/{slug}/options', 'propose'),
  choose: body('/api/rooms/{slug}/choose', 'choose'),
  abstain: body('/api/rooms/{slug}/abstain', 'abstain'),
  listDecisions: read('/api/rooms/{slug}/decisions', 'listDecisions'),
  outcome: read('/api/rooms/{slug}/outcome', 'getOutcome'),
  closeRoom: body('/api/rooms/{slug}/close', 'closeRoom'),
  createInvite: body('/api/rooms/{slug}/invites', 'createInvite'),
  listInvites: read('/api/rooms/{slug}/invites', 'listInvites'),
  revokeInvite: {
    method: 'DELETE',
    path: '/api/rooms/{slug}/invites/{code}',
    source: 'none',
    mutating: true,
    operation: 'revokeInvite',
  },
  updateMemberRole: body('/api/rooms/{slug}/members/{participant}', 'updateMemberRole', 'PATCH'),
  updateRoomSettings: body('/api/rooms/{slug}/settings', 'updateRoomSettings', 'PATCH'),
  awaitNextAction: read('/api/rooms/{slug}/next-action', 'awaitNextAction'),
  listEvents: read('/api/rooms/{slug}/events', 'listEvents'),
  registerWebhook: body('/api/rooms/{slug}/webhooks', 'registerWebhook'),
  listWebhooks: read('/api/rooms/{slug}/webhooks', 'listWebhooks'),
  unregisterWebhook: {
    method: 'DELETE',
    path: '/api/rooms/{slug}/webhooks/{id}',
    source: 'none',
    mutating: true,
    operation: 'unregisterWebhook',
  },
  discover: { method: 'GET', path: '/.well-known/svc.json', source: 'none', mutating: false },
  jwks: { method: 'GET', path: '/.well-known/jwks.json', source: 'none', mutating: false },
  health: { method: 'GET', path: '/healthz', source: 'none', mutating: false },
} satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof ROUTES;
