/** PATCH /api/rooms/{slug}/members/{participant} — change a member's role (docs/concepts.md, Seats, members and roles). */
import { z } from 'zod';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const roleInput = z
  .object({ slug: slugSchema, participant: z.string().min(1).max(200), role: z.enum(['participant', 'observer']) })
  .meta({ id: 'UpdateMemberRoleRequest' });

export const updateMemberRole = {
  name: 'updateMemberRole',
  summary: "Change a member's role",
  description:
    "Operator only. Makes a member a participant or an observer (observers read and wait, never act or count). The path names the member by id or unambiguous display name. The creator's role cannot change.",
  tag: 'rooms',
  method: 'PATCH',
  path: '/api/rooms/{slug}/members/{participant}',
  inputSource: 'body',
  input: roleInput,
  output: z
    .object({ slug: z.string(), participant: z.object({ id: z.string(), display_name: z.string(), role: z.string() }) })
    .meta({ id: 'UpdateMemberRoleResponse' }),
  requestSchemaName: 'UpdateMemberRoleRequest',
  responseSchemaName: 'UpdateMemberRoleResponse',
  mutating: true,
  deferValidation: true,
  async handle(ctx, input, invalid) {
    return act(ctx, input.slug, {
      action: 'update_member_role',
      route: `PATCH /api/rooms/${input.slug}/members/${input.participant}`,
      build: (_state, actor, now) => ({
        type: 'SET_ROLE',
        now,
        actor,
        target: input.participant ?? '',
        role: input.role ?? 'participant',
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (info, state) => ({
        slug: state.slug,
        participant: {
          id: info.participant_id as string,
          display_name: info.display_name as string,
          role: info.role as string,
        },
      }),
    });
  },
} satisfies OperationDef<z.infer<typeof roleInput>>;
