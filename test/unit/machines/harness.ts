/** Drives the room machine without I/O: replies, events and seals are collected; seals get fake receipts. */
import { createHash } from 'node:crypto';
import { type Actor as XActor, createActor } from 'xstate';
import type { RoomCommand, RoomEmitted } from '../../../machines/room.events.js';
import { type RoomInput, roomMachine } from '../../../machines/room.machine.js';
import { resolveConfig } from '../../../src/domain/config.js';
import type { Actor, RoomConfig } from '../../../src/domain/types.js';
import { roomStateOf } from '../../../src/runtime/room-state.js';

export const T0 = Date.parse('2026-05-01T10:00:00.000Z');

export function actorFor(id: string, isOperator = false): Actor {
  return {
    participantId: id,
    displayName: id,
    agentId: `participant:${id}`,
    mandateRef: null,
    isOperator,
    isAdmin: false,
  };
}

export class RoomHarness {
  actor: XActor<typeof roomMachine>;
  events: string[] = [];
  private seals = 0;

  constructor(config: Partial<RoomConfig> = {}, snapshot?: unknown) {
    const input: RoomInput = {
      slug: 'testroom22',
      createdAt: T0,
      about: null,
      config: resolveConfig(config),
      passwordHash: null,
      ownerPrincipalId: null,
    };
    this.actor = snapshot
      ? createActor(roomMachine, { snapshot: snapshot as never, input })
      : createActor(roomMachine, { input });
    this.actor.start();
  }

  send(command: RoomCommand | Parameters<XActor<typeof roomMachine>['send']>[0]): RoomEmitted | null {
    let reply: RoomEmitted | null = null;
    const queue: RoomEmitted[] = [];
    const sub = this.actor.on('*', (e) => {
      const emitted = e as RoomEmitted;
      if (emitted.type === 'reply') reply ??= emitted;
      else if (emitted.type === 'event') this.events.push(emitted.draft.event_type);
      else queue.push(emitted);
    });
    this.actor.send(command);
    while (queue.length > 0) {
      const next = queue.shift()!;
      const head = this.state().room.chain;
      const hash = `sha256:${createHash('sha256')
        .update(String(++this.seals))
        .digest('hex')}`;
      this.actor.send({
        type: 'RECEIPT_SIGNED',
        decisionId: next.type === 'seal' ? next.decisionId : null,
        link: { sequence: head.length + 1, hash, prevHash: head.head },
      });
    }
    sub.unsubscribe();
    return reply;
  }

  join(id: string, now = T0): RoomEmitted | null {
    return this.send({
      type: 'JOIN',
      now,
      seat: {
        id,
        tokenHash: id,
        displayName: id,
        role: 'participant',
        via: this.state().room.members.length === 0 ? 'create' : 'join',
        agentDid: null,
        mandateId: null,
      },
      admission: { passwordGiven: false, passwordOk: false },
    });
  }

  state() {
    return roomStateOf(this.actor.getSnapshot(), 1, 0);
  }

  decision(seq = 1) {
    return this.state().decisions.find((d) => d.data.seq === seq)!;
  }
}

export function errorCode(reply: RoomEmitted | null): string | undefined {
  return reply && reply.type === 'reply' && !reply.ok ? reply.error.code : undefined;
}
