/** POST /api/rooms/{slug}/join — take a seat (docs/concepts.md, Seats, members and roles). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type Caller, mandateRequired, resolveCaller } from '../auth/caller.js';
import type { RoomState } from '../domain/state.js';
import { hashSecret, randomToken, verifyPassword } from '../auth/secrets.js';
import { roomStatus } from '../domain/views/common.js';
import { roomStatusSchema } from '../domain/views/schemas.js';
import { roomNotFound } from '../runtime/registry.js';
import { roomUrl } from '../runtime/sealing.js';
import { linkSeat } from './list-rooms.js';
import { idempotencyFor, slugSchema } from './shared.js';
import type { OperationDef, RequestContext } from './types.js';

const joinInput = z
  .object({
    slug: slugSchema,
    display_name: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('The name other members see (1 to 100 characters); default: a generated name.'),
    password: z.string().max(1024).optional().describe('The room password, to join a private room without an invite.'),
    invite: z
      .string()
      .max(200)
      .optional()
      .describe('The invite token you were given (it_…), to join a private room; it grants the invite role.'),
  })
  .meta({ id: 'JoinRoomRequest', description: 'Take a seat in a room.' });

const joinOutput = z
  .object({
    ok: z.literal(true).describe('Always true on success.'),
    slug: z.string().describe('The room slug.'),
    url: z.string().describe('The room URL.'),
    participant_id: z.string().describe('Your seat id.'),
    participant_token: z
      .string()
      .nullable()
      .describe(
        'Your seat credential, shown only now: send it as the token argument (MCP) or Authorization: Bearer (REST). null for mandate seats, which present the mandate instead.',
      ),
    display_name: z.string().describe('Your display name in the room.'),
    role: z.enum(['participant', 'observer']).describe('participant (may act) or observer (reads only).'),
    agent_did: z.string().optional().describe('Mandate seats: the agent DID the seat belongs to.'),
    recovered: z.literal(true).optional().describe('Present when an existing seat was recovered instead of a new one.'),
    about: z.string().nullable().describe("The room's standing description; null if none."),
    status: roomStatusSchema,
    current_through: z.number().int().describe('The last event seq; read_room with since picks up from here.'),
  })
  .meta({ id: 'JoinRoomResponse', description: 'Your new seat.' });

export const joinRoom = {
  name: 'joinRoom',
  summary: 'Join a room',
  description:
    'Creates a participant seat and returns its participant_token once (send it as Authorization: Bearer on later calls). Private rooms need an invite or the room password.',
  tag: 'rooms',
  method: 'POST',
  path: '/api/rooms/{slug}/join',
  inputSource: 'body',
  input: joinInput,
  output: joinOutput,
  requestSchemaName: 'JoinRoomRequest',
  responseSchemaName: 'JoinRoomResponse',
  mutating: true,
  shownText: { display_name: 'seat_name' },
  mandateAction: 'member_join_request',
  example: { input: { slug: 'k7mq2xw9pa', display_name: 'planner-agent' } },
  mcp: { tool: 'join_room', catalogs: ['participant'] },
  async handle(ctx, input) {
    const { services } = ctx;
    const mandate = ctx.credentials.verified ?? null;
    const current = await services.registry.read(input.slug);
    if (!current) throw roomNotFound(input.slug);
    const passwordOk =
      input.password !== undefined && current.room.passwordHash !== null
        ? await verifyPassword(input.password, current.room.passwordHash, ctx.clientIp)
        : false;
    const bearer = ctx.credentials.bearer;
    const account =
      mandate && bearer?.startsWith('rk_') && services.hostedAccount
        ? await services.hostedAccount(bearer, mandate.jti)
        : null;
    // Mandate seats carry no token: the mandate is presented on every call (docs/concepts.md, Mandates).
    const token = mandate ? null : randomToken('t_');
    const participantId = randomUUID();
    const turn = await services.registry.execute(input.slug, {
      prepare: (state, now) => {
        const caller = checkJoinCredentials(state, ctx);
        return {
          command: {
            type: 'JOIN',
            now,
            seat: {
              id: participantId,
              tokenHash: token === null ? null : hashSecret(token),
              displayName: input.display_name ?? null,
              role: 'participant',
              via: mandate ? 'mandate' : 'join',
              agentDid: mandate?.sub ?? null,
              agentIss: mandate?.issuerPrincipal ?? null,
              mandateId: mandate?.jti ?? null,
              provenSeatId: caller?.kind === 'member' && caller.mandate !== null ? caller.member.id : null,
            },
            admission: {
              passwordGiven: input.password !== undefined,
              passwordOk,
              ...(input.invite !== undefined ? { inviteHash: hashSecret(input.invite) } : {}),
              principal: mandate?.issuerPrincipal ?? null,
              account,
            },
          },
          idempotency: idempotencyFor(ctx, input.slug),
        };
      },
      render: (info, state) => ({
        ok: true,
        slug: state.slug,
        url: roomUrl(services.baseUrl, state.slug),
        participant_id: info.participant_id as string,
        participant_token: token,
        display_name: info.display_name as string,
        role: info.role as string,
        ...(mandate ? { agent_did: mandate.sub } : {}),
        ...(info.recovered === true ? { recovered: true } : {}),
        about: state.room.about,
        status: roomStatus(state, services.clock.now()),
        current_through: state.head,
      }),
    });
    ctx.replayed = turn.replayed;
    if (!turn.replayed) await linkSeat(ctx, input.slug, token);
    return turn.result;
  },
} satisfies OperationDef<z.infer<typeof joinInput>>;

/**
 * A join's credentials (docs/concepts.md, Mandates): a presented token must be valid; a mandate needs a room that
 * accepts mandates; a mandate-only room refuses a join without one. Returns the caller a mandate
 * resolved to: the seat it already reaches, if any (auth/seat-binding.ts).
 */
function checkJoinCredentials(state: RoomState, ctx: RequestContext): Caller | null {
  const { credentials } = ctx;
  if (credentials.mandate) return resolveCaller(state, credentials, ctx.services.auth, 'seat');
  if (state.room.config.auth === 'mandate_required') throw mandateRequired(state.slug);
  if (credentials.bearer) resolveCaller(state, credentials, ctx.services.auth, 'read');
  return null;
}
