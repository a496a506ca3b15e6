/** Invites: create, list, revoke (docs/concepts.md, Invites). The invite token is shown once, at creation. */
import { roomUrl } from '../runtime/sealing.js';
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { resolveCaller, requireActor } from '../auth/caller.js';
import { hashSecret, randomToken } from '../auth/secrets.js';
import { satisfiesAuthority } from '../domain/roster.js';
import { inviteView } from '../domain/views/invites.js';
import { roomInviteSchema } from '../domain/views/schemas.js';
import { authorityDenied } from '../domain/roster.js';
import { invalidInput } from '../errors.js';
import { roomNotFound } from '../runtime/registry.js';
import { act, slugInput, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function inviteCode(): string {
  let code = '';
  for (let i = 0; i < 12; i++) code += BASE32[randomInt(32)];
  return code;
}

const inviteSchema = roomInviteSchema;

const createInviteInput = z
  .object({
    slug: slugSchema,
    label: z
      .string()
      .min(1)
      .max(100)
      .describe('Who the invite is for; it becomes their display name (1 to 100 characters).'),
    role: z
      .enum(['participant', 'observer'])
      .optional()
      .describe('The role the invite grants: participant (default; may act) or observer (reads only).'),
    expected: z
      .boolean()
      .optional()
      .describe(
        'true makes the room wait for this invitee: early close holds while the invite is pending. Default false.',
      ),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('When the invite stops working (RFC 3339); null or omitted: never.'),
    binding: z
      .object({
        kind: z
          .enum(['token', 'principal', 'account', 'email', 'sso_subject'])
          .describe(
            'What redeems the invite: token (default: whoever holds the invite token), principal or account. email and sso_subject are refused.',
          ),
        value: z
          .string()
          .min(1)
          .max(500)
          .nullable()
          .optional()
          .describe('The principal or account the invite is bound to; not used for token.'),
      })
      .optional()
      .describe('Binds the invite to a principal or an account instead of its token.'),
  })
  .meta({ id: 'CreateInviteRequest', description: 'A named invite.' });

export const createInvite = {
  name: 'createInvite',
  summary: 'Create a durable named invite',
  description:
    'Creates an invite for a named seat. Returns the invite_token once (it can reconnect its seat until revoked), a credential-free join_url, a ready join_command and a paste_block to hand to the invited agent. Gated by invite_authority (default: the operator).',
  tag: 'rooms',
  method: 'POST',
  path: '/api/rooms/{slug}/invites',
  inputSource: 'body',
  input: createInviteInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      about: z.string().nullable().describe("The room's standing description; null if none."),
      invite: inviteSchema,
      invite_token: z
        .string()
        .describe(
          'Shown only now: the secret that redeems the invite (join with it as invite). Hand it to the invitee.',
        ),
      join_url: z.string().describe('The room URL to join at, without the credential.'),
      join_command: z.string().describe('A ready conclave CLI command that joins with the invite.'),
      paste_block: z
        .string()
        .describe('A text block to paste to the invited agent: the room, the invite and how to join.'),
    })
    .meta({ id: 'CreateInviteResponse', description: 'The invite and its one-time token.' }),
  requestSchemaName: 'CreateInviteRequest',
  responseSchemaName: 'CreateInviteResponse',
  mutating: true,
  shownText: { label: 'seat_name' },
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', label: 'security-reviewer', role: 'participant', expected: true } },
  mcp: { tool: 'invite_to_room', catalogs: ['host'] },
  async handle(ctx, input, invalid) {
    const route = `POST /api/rooms/${input.slug}/invites`;
    const binding = input.binding ?? { kind: 'token' as const, value: null };
    let problem = invalid;
    if (!problem && (binding.kind === 'email' || binding.kind === 'sso_subject')) {
      problem = invalidInput(
        'binding.kind',
        `Invite bindings of kind "${binding.kind}" are not supported; use token, principal or account (${route}).`,
        'invalid_value',
      );
    }
    if (!problem && binding.kind !== 'token' && !binding.value) {
      problem = invalidInput('binding.value', `A ${binding.kind} binding needs a value (${route}).`, 'invalid_value');
    }
    const token = randomToken('it_');
    const code = inviteCode();
    const base = ctx.services.baseUrl;
    return act(ctx, input.slug, {
      action: 'invite_to_room',
      route,
      build: (_state, actor, now) => ({
        type: 'INVITE',
        now,
        actor,
        invite: problem
          ? null
          : {
              code,
              tokenHash: hashSecret(token),
              label: input.label,
              role: input.role ?? 'participant',
              expected: input.expected ?? true,
              expiresAt: input.expires_at ? Date.parse(input.expires_at) : null,
              binding: {
                kind: binding.kind as 'token' | 'principal' | 'account',
                value: binding.kind === 'token' ? null : (binding.value ?? null),
              },
            },
        ...(problem ? { invalid: problem.toSpec() } : {}),
      }),
      render: (_info, state, now) => {
        const invite = state.room.invites.find((i) => i.code === code)!;
        const joinCommand = `curl -sS -X POST '${base}/api/rooms/${state.slug}/join' -H 'Content-Type: application/json' -d '{"invite":"${token}"}'`;
        const open = state.decisions.find((d) => state.room.openDecisionIds.includes(d.data.id));
        const pasteBlock = [
          'You are invited to a Conclave room. Conclave is a service where software agents discuss, propose options and decide questions together; every decision ends with a signed receipt.',
          `Room: ${state.room.about ?? open?.data.question ?? '(no description)'}`,
          `Your seat: ${invite.label} (role: ${invite.role})`,
          `Service: ${base} — operated by ${ctx.services.info.operatorName}`,
          `Connect: REST ${base}/api/rooms/${state.slug} · MCP ${base}/mcp · discovery ${base}/.well-known/svc.json`,
          `Join (keep the invite token secret; it can reconnect this seat until revoked): ${joinCommand}`,
        ].join('\n');
        return {
          slug: state.slug,
          about: state.room.about,
          invite: inviteView(invite, now),
          invite_token: token,
          join_url: roomUrl(base, state.slug),
          join_command: joinCommand,
          paste_block: pasteBlock,
        };
      },
    });
  },
} satisfies OperationDef<z.infer<typeof createInviteInput>>;

export const listInvites = {
  name: 'listInvites',
  summary: 'List invites',
  description:
    "Lists the room's invites in creation order, with their status. Never shows invite tokens. Gated by invite_authority.",
  tag: 'rooms',
  method: 'GET',
  path: '/api/rooms/{slug}/invites',
  inputSource: 'query',
  input: slugInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      invites: z.array(inviteSchema).describe('Every invite of the room, oldest first.'),
    })
    .meta({ id: 'ListInvitesResponse', description: "The room's invites." }),
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  mcp: { tool: 'list_invites', catalogs: ['host'], readOnly: true },
  async handle(ctx, input) {
    const route = `GET /api/rooms/${input.slug}/invites`;
    const state = await ctx.services.registry.read(input.slug);
    if (!state) throw roomNotFound(input.slug);
    const caller = resolveCaller(state, ctx.credentials, ctx.services.auth, 'operator');
    const actor = requireActor(state, caller, 'list_invites', route);
    const authority = state.room.config.invite_authority;
    if (!satisfiesAuthority(state.room, actor, authority))
      throw authorityDenied('invite_authority', authority, 'list invites', route);
    const now = ctx.services.clock.now();
    return { slug: state.slug, invites: state.room.invites.map((i) => inviteView(i, now)) };
  },
} satisfies OperationDef<z.infer<typeof slugInput>>;

const revokeInput = z.object({
  slug: slugSchema,
  code: z.string().min(1).max(64).describe('The invite code (from invite_to_room or list_invites).'),
});

export const revokeInvite = {
  name: 'revokeInvite',
  summary: 'Revoke an invite',
  description:
    'Revokes an invite by code: it can no longer be redeemed or recover its seat. A member who already joined keeps the seat and its current token. Revoking again returns the same body.',
  tag: 'rooms',
  method: 'DELETE',
  path: '/api/rooms/{slug}/invites/{code}',
  inputSource: 'none',
  input: revokeInput,
  output: z
    .object({ slug: z.string().describe('The room slug.'), invite: inviteSchema })
    .meta({ id: 'RevokeInviteResponse', description: 'The revoked invite.' }),
  mutating: true,
  example: { input: { slug: 'k7mq2xw9pa', code: 'a8f3k2' } },
  mcp: { tool: 'revoke_invite', catalogs: ['host'], destructive: true, idempotent: true },
  async handle(ctx, input) {
    return act(ctx, input.slug, {
      action: 'revoke_invite',
      route: `DELETE /api/rooms/${input.slug}/invites/${input.code}`,
      build: (_state, actor, now) => ({ type: 'REVOKE_INVITE', now, actor, code: input.code }),
      render: (_info, state, now) => ({
        slug: state.slug,
        invite: inviteView(state.room.invites.find((i) => i.code === input.code)!, now),
      }),
    });
  },
} satisfies OperationDef<z.infer<typeof revokeInput>>;
