/** DELETE /api/rooms/{slug} — irreversible removal by an operator, with a confirmation header (docs/concepts.md, Rooms). */
import { z } from 'zod';
import { authRequired, resolveCaller } from '../auth/caller.js';
import { invalidInput, protocolError } from '../errors.js';
import { roomNotFound } from '../runtime/registry.js';
import { slugInput } from './shared.js';
import type { OperationDef } from './types.js';

export const deleteRoom = {
  name: 'deleteRoom',
  summary: 'Delete a room',
  description:
    'Removes the room, its events, webhooks and stored receipts. Requires an operator credential (creator token or admin token) and X-Confirm-Delete: <slug>. Works in every room state. The slug is never reused.',
  tag: 'rooms',
  method: 'DELETE',
  path: '/api/rooms/{slug}',
  inputSource: 'none',
  input: slugInput,
  output: z
    .object({
      ok: z.literal(true).describe('Always true on success.'),
      deleted_room_slug: z.string().describe('The slug of the deleted room.'),
    })
    .meta({ id: 'DeleteRoomResponse', description: 'The room is gone.' }),
  mutating: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  async handle(ctx, input) {
    const { services } = ctx;
    const route = `DELETE /api/rooms/${input.slug}`;
    const state = await services.registry.read(input.slug);
    if (!state) throw roomNotFound(input.slug);
    if (!ctx.credentials.bearer && !ctx.credentials.mandate) throw authRequired('delete_room', route);
    const caller = resolveCaller(state, ctx.credentials, services.auth, 'operator');
    const isOperator = caller.kind === 'admin' || (caller.kind === 'member' && caller.member.isCreator);
    if (!isOperator) {
      throw protocolError(
        'authority.denied',
        `Only the room operator (creator token or admin token) can delete room ${input.slug} (${route}).`,
        {
          details: { authority: 'operator', required: 'operator' },
        },
      );
    }
    if (ctx.headers['x-confirm-delete'] !== input.slug) {
      throw invalidInput(
        'X-Confirm-Delete',
        `Deleting is irreversible: send the header X-Confirm-Delete: ${input.slug} to confirm (${route}).`,
        'confirmation_mismatch',
      );
    }
    await services.registry.remove(input.slug);
    services.presence.forget(input.slug);
    return { ok: true, deleted_room_slug: input.slug };
  },
} satisfies OperationDef<z.infer<typeof slugInput>>;
