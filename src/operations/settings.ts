/** PATCH /api/rooms/{slug}/settings — update the mutable config keys (docs/configuration.md). */
import { z } from 'zod';
import { roomConfigSchema } from '../domain/config.js';
import { invalidInput } from '../errors.js';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const settingsInput = z
  .object({ slug: slugSchema, settings: z.record(z.string(), z.unknown()) })
  .meta({ id: 'UpdateRoomSettingsRequest' });

export const updateRoomSettings = {
  name: 'updateRoomSettings',
  summary: 'Update room settings',
  description:
    'Operator only. Body {settings: {...}} with any of the mutable RoomConfig keys (not type, visibility, mechanism). Re-validated like creation; applies at once (voting_window only to decisions opened later). Returns the resolved config and the changed keys.',
  tag: 'rooms',
  method: 'PATCH',
  path: '/api/rooms/{slug}/settings',
  inputSource: 'body',
  input: settingsInput,
  output: z
    .object({ slug: z.string(), config: roomConfigSchema, changed: z.array(z.string()) })
    .meta({ id: 'UpdateRoomSettingsResponse' }),
  requestSchemaName: 'UpdateRoomSettingsRequest',
  responseSchemaName: 'UpdateRoomSettingsResponse',
  mutating: true,
  deferValidation: true,
  mcp: { tool: 'update_room_settings', catalogs: ['host'] },
  async handle(ctx, input, invalid) {
    const route = `PATCH /api/rooms/${input.slug}/settings`;
    const problem =
      invalid && input.settings === undefined
        ? invalidInput(
            'settings',
            `The body must be {"settings": {...}} with the keys to change (${route}).`,
            'wrong_type',
          )
        : invalid;
    return act(ctx, input.slug, {
      action: 'update_room_settings',
      route,
      build: (_state, actor, now) => ({
        type: 'UPDATE_SETTINGS',
        now,
        actor,
        settings: input.settings,
        ...(problem ? { invalid: problem.toSpec() } : {}),
      }),
      render: (info, state) => ({ slug: state.slug, config: state.room.config, changed: info.changed as string[] }),
    });
  },
} satisfies OperationDef<z.infer<typeof settingsInput>>;
