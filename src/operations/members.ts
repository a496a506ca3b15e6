/** PATCH /api/rooms/{slug}/members/{participant} — change a member's role (docs/concepts.md, Seats, members and roles). */
import { z } from 'zod';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const roleInput = z
  .object({
    slug: slugSchema,
    participant: z.string().min(1).max(200).describe('The participant id of the seat to change.'),
    role: z.enum(['participant', 'observer']).describe('The new role: participant (may act) or observer (reads only).'),
  })
  .meta({ id: 'UpdateMemberRoleRequest', description: "A seat's new role." });

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
    .object({
      slug: z.string().describe('The room slug.'),
      participant: z
        .object({
          id: z.string().describe('Participant id.'),
          display_name: z.string().describe('Display name.'),
          role: z.enum(['participant', 'observer']).describe('The role now.'),
        })
        .describe('The seat after the change.'),
    })
    .meta({ id: 'UpdateMemberRoleResponse', description: 'The seat after the change.' }),
  requestSchemaName: 'UpdateMemberRoleRequest',
  responseSchemaName: 'UpdateMemberRoleResponse',
  mutating: true,
  example: { input: { slug: 'k7mq2xw9pa', participant: '5f0c8a9e-3b1d-4c51-9d7a-2e6f4b8c1a07', role: 'observer' } },
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
