/**
 * The operation table: every protocol operation, written once. REST routes (http/routes.ts), MCP
 * tools (mcp/) and the OpenAPI document (http/openapi.ts) are generated from it.
 */
import { abstain } from './abstain.js';
import { ask } from './ask.js';
import { choose, chooseByGet } from './choose.js';
import { closeRoom } from './close-room.js';
import { createRoom } from './create-room.js';
import { deleteRoom } from './delete-room.js';
import { discuss } from './discuss.js';
import { createInvite, listInvites, revokeInvite } from './invites.js';
import { joinRoom } from './join-room.js';
import { listDecisions } from './list-decisions.js';
import { listRooms } from './list-rooms.js';
import { listEvents } from './list-events.js';
import { updateMemberRole } from './members.js';
import { nextAction } from './next-action.js';
import { logPositions } from './log-positions.js';
import { outcome } from './outcome.js';
import { propose } from './propose.js';
import { readRoomOperation } from './read-room.js';
import { getRoomMachine } from './room-machine.js';
import { updateRoomSettings } from './settings.js';
import { startChoosing } from './start-choosing.js';
import type { AnyOperation } from './types.js';
import { listWebhooks, registerWebhook, unregisterWebhook } from './webhooks.js';

export const OPERATIONS: readonly AnyOperation[] = [
  createRoom,
  readRoomOperation,
  getRoomMachine,
  deleteRoom,
  joinRoom,
  ask,
  startChoosing,
  discuss,
  propose,
  choose,
  chooseByGet,
  abstain,
  listDecisions,
  outcome,
  logPositions,
  closeRoom,
  createInvite,
  listInvites,
  revokeInvite,
  updateMemberRole,
  updateRoomSettings,
  listRooms,
  nextAction,
  listEvents,
  registerWebhook,
  listWebhooks,
  unregisterWebhook,
];
