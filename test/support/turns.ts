/** Turns built by hand, for tests that drive a room's registry directly (no HTTP in between). */
import { randomUUID } from 'node:crypto';
import type { RoomCommand } from '../../machines/room.events.js';
import type { Actor } from '../../src/domain/types.js';
import type { IdempotencySpec, TurnSpec } from '../../src/runtime/registry.js';
import type { RoomState } from '../../src/runtime/room-state.js';

/** The room's creator, acting as themselves. */
export function creator(state: RoomState): Actor {
  const member = state.room.members.find((m) => m.isCreator)!;
  return {
    participantId: member.id,
    displayName: member.displayName,
    agentId: `participant:${member.id}`,
    mandateRef: null,
    isOperator: false,
    isAdmin: false,
  };
}

/** The creator posts `body`; `invalid` makes the machine refuse it. */
export function discuss(
  body: string,
  options: { invalid?: boolean; idempotency?: IdempotencySpec } = {},
): TurnSpec<{ body: string; head: number; id: unknown }> {
  return {
    prepare: (state, now) => ({
      command: {
        type: 'DISCUSS',
        now,
        actor: creator(state),
        messageId: randomUUID(),
        body,
        stance: null,
        ...(options.invalid ? { invalid: { code: 'input.invalid', message: `refused: ${body}` } } : {}),
      } as RoomCommand,
      idempotency: options.idempotency,
    }),
    render: (info, state) => ({ body, head: state.head, id: info.message_id ?? info.id }),
  };
}
