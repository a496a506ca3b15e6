/** PATCH /api/rooms/{slug}/settings — update the mutable config keys (docs/configuration.md). */
import { z } from 'zod';
import { CONFIG_KEYS, resolvedRoomConfigSchema, roomSettingsPatchSchema } from '../domain/config.js';
import type { RoomConfig } from '../domain/types.js';
import { invalidInput } from '../errors.js';
import { checkedLater } from './json-schema.js';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const settingsInput = z
  .object({
    slug: slugSchema,
    settings: checkedLater(
      z
        .record(z.string(), z.unknown())
        .describe('The RoomConfig keys to change (not type, visibility or mechanism); the others keep their values.'),
      roomSettingsPatchSchema,
    ),
  })
  .meta({ id: 'UpdateRoomSettingsRequest', description: 'Changes to the mutable room settings.' });

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
    .object({
      slug: z.string().describe('The room slug.'),
      config: resolvedRoomConfigSchema.describe('The resolved config after the change: every key present.'),
      changed: z
        .array(roomSettingsPatchSchema.keyof())
        .describe('The keys whose values changed (only mutable keys can change).'),
    })
    .meta({ id: 'UpdateRoomSettingsResponse', description: 'The config after the change.' }),
  requestSchemaName: 'UpdateRoomSettingsRequest',
  responseSchemaName: 'UpdateRoomSettingsResponse',
  mutating: true,
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', settings: { voting_window: 7200, early_close: true } } },
  mcp: { tool: 'update_room_settings', catalogs: ['host'], idempotent: true },
  async handle(ctx, input, invalid) {
    const route = `PATCH /api/rooms/${input.slug}/settings`;
    // Config keys sent at the top level (or no settings at all) are taught the body's shape; any
    // other unknown key keeps its own refusal, which names the key meant (settings for "setting").
    const misplaced =
      invalid?.details?.reason !== 'unknown_keys' || CONFIG_KEYS.includes(invalid.details.field as keyof RoomConfig);
    const problem =
      invalid && input.settings === undefined && misplaced
        ? invalidInput(
            'settings',
            `The body must be {"settings": {...}} with the keys to change (${route}).`,
            'wrong_type',
          )
        : invalid;
    const result = await act(ctx, input.slug, {
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
    // The webhooks of seats this change shut out are disabled by the room's next catch-up (queued by
    // the commit): the answer waits for it (docs/architecture.md, Engagement).
    if (result.changed.includes('auth')) await ctx.services.engagement.webhooks.catchUp(input.slug);
    return result;
  },
} satisfies OperationDef<z.infer<typeof settingsInput>>;
