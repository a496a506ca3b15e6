/**
 * MCP `list_rooms` (docs/agents.md, MCP): the rooms the caller holds a seat in, newest room first — every room
 * where the mandate's subject is seated, or the single room a participant token belongs to.
 */
import { z } from 'zod';
import { type AuthSettings, authRequired, type PresentedCredentials, resolveCaller } from '../auth/caller.js';
import { hashSecret } from '../auth/secrets.js';
import { iso, roomStatus } from '../domain/views/common.js';
import { roomStatusSchema } from '../domain/views/schemas.js';
import type { RoomState } from '../domain/state.js';
import type { Member } from '../domain/types.js';
import { ProtocolError } from '../errors.js';
import { roomUrl } from '../runtime/sealing.js';
import type { OperationDef, RequestContext } from './types.js';

const listRoomsInput = z.object({
  limit: z.number().int().min(1).max(100).optional().describe('Most rooms to return (1 to 100); default 50.'),
});

type Verified = NonNullable<RequestContext['credentials']['verified']>;

/**
 * Mandate seats are indexed by (issuer, sub), so another issuer naming the same sub can neither list
 * nor crowd out the seat's rooms. Links written before seats were bound to their issuer are keyed by
 * the sub alone (`sub:…`): still read, and filtered by the seat's issuer like everything else.
 */
function mandateLinkKey(mandate: Verified): string {
  return `seat:${JSON.stringify([mandate.issuerPrincipal, mandate.sub])}`;
}

/** The credential-link keys a caller's seats are indexed under (see linkSeat), newest scheme first. */
function seatLinkKeys(credentials: RequestContext['credentials']): string[] {
  if (credentials.verified) return [mandateLinkKey(credentials.verified), `sub:${credentials.verified.sub}`];
  if (credentials.bearer) return [`token:${hashSecret(credentials.bearer)}`];
  return [];
}

/** Indexes a new seat for list_rooms: its token, and its mandate (issuer, subject) when it has one. */
export async function linkSeat(ctx: RequestContext, slug: string, token: string | null): Promise<void> {
  const now = ctx.services.clock.now();
  if (token !== null) await ctx.services.store.linkRoom(`token:${hashSecret(token)}`, slug, now);
  if (ctx.credentials.verified) await ctx.services.store.linkRoom(mandateLinkKey(ctx.credentials.verified), slug, now);
}

/**
 * The seat the credential reads the room with, as the room's reads resolve it (auth/caller.ts, the room's
 * `config.auth` included): a room whose reads refuse the credential — its seat reached by a mandate
 * after the operator set `token_only`, a superseded token — is not listed either.
 */
function readingSeat(state: RoomState, credentials: PresentedCredentials, auth: AuthSettings): Member | undefined {
  try {
    const caller = resolveCaller(state, { ...credentials }, auth, 'read');
    return caller.kind === 'member' ? caller.member : undefined;
  } catch (error) {
    if (error instanceof ProtocolError) return undefined;
    throw error;
  }
}

export const listRooms = {
  name: 'listRooms',
  summary: 'List your rooms',
  description:
    'Lists the rooms where you hold a seat, newest room first: with a mandate, every room its subject is seated in; with a participant token, the room that token belongs to.',
  tag: 'rooms',
  method: 'GET',
  path: '/mcp/list_rooms',
  inputSource: 'query',
  input: listRoomsInput,
  output: z
    .object({
      rooms: z
        .array(
          z
            .object({
              slug: z.string().describe('The room slug.'),
              url: z.string().describe('The room URL.'),
              about: z.string().nullable().describe("The room's standing description; null if none."),
              status: roomStatusSchema,
              role: z.enum(['participant', 'observer']).describe('Your role in it.'),
              created_at: z.string().describe('When the room was created (RFC 3339, UTC).'),
              joined_at: z.string().describe('When you took your seat (RFC 3339, UTC).'),
            })
            .meta({ id: 'SeatedRoom', description: 'A room your credential holds a seat in.' }),
        )
        .describe('The rooms your credential holds a seat in, newest first.'),
    })
    .meta({ id: 'ListRoomsResponse', description: 'Your rooms.' }),
  mutating: false,
  mcpOnly: true,
  example: { input: { limit: 20 } },
  mcp: { tool: 'list_rooms', catalogs: ['host'], readOnly: true },
  async handle(ctx, input) {
    const keys = seatLinkKeys(ctx.credentials);
    if (keys.length === 0) throw authRequired('list_rooms', 'MCP list_rooms');
    const { services } = ctx;
    const now = services.clock.now();
    const slugs = new Set<string>();
    for (const key of keys) for (const slug of await services.store.linkedRooms(key, 500)) slugs.add(slug);
    const rooms: Record<string, unknown>[] = [];
    for (const slug of slugs) {
      const state = await services.registry.read(slug);
      const member = state ? readingSeat(state, ctx.credentials, services.auth) : undefined;
      if (!state || !member) continue;
      rooms.push({
        slug,
        url: roomUrl(services.baseUrl, slug),
        about: state.room.about,
        status: roomStatus(state, now),
        role: member.role,
        created_at: iso(state.room.createdAt),
        joined_at: iso(member.joinedAt),
      });
    }
    rooms.sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
    return { rooms: rooms.slice(0, input.limit ?? 50) };
  },
} satisfies OperationDef<z.infer<typeof listRoomsInput>>;
