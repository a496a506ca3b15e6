/**
 * `conclave rooms list` and `conclave whoami`: which rooms this shell holds tokens for, in which
 * roles, and whether the service still accepts them. Tokens themselves are never printed.
 */
import { Buffer } from 'node:buffer';
import type { Command } from 'commander';
import { type Body, ConclaveClient, ConclaveError, ConclaveNetworkError } from '../client/index.js';
import { configPath, readConfig, SEAT_SLOTS, type SavedRoom, type SeatSlot } from './credentials.js';
import { DEFAULT_BASE, type GlobalOptions, jsonOutput, print, serviceBase } from './shell.js';

interface RoomRow {
  slug: string;
  base: string;
  roles: SeatSlot[];
  status: string | null;
  about?: string | null;
  role?: string;
}

export function registerIdentityCommands(program: Command): void {
  const rooms = program.command('rooms').description('the rooms you hold tokens for');
  rooms
    .command('list')
    .description('every room with a saved token: your roles, and its status as the service reports it')
    .option('--offline', 'only what the config file says; do not ask the service')
    .action(async (options: { offline?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const file = configPath();
      const config = await readConfig(file);
      const rows: RoomRow[] = [];
      for (const [slug, room] of Object.entries(config.rooms)) {
        const base = serviceBase(command, globals.base ?? room.base ?? config.base ?? DEFAULT_BASE);
        const row: RoomRow = { slug, base, roles: slotsOf(room), status: null };
        if (!options.offline) Object.assign(row, await serviceView(base, slug, room));
        rows.push(row);
      }
      if (globals.mandate && !options.offline) {
        const base = serviceBase(command, globals.base ?? config.base ?? DEFAULT_BASE);
        rows.push(...(await mandateRooms(base, globals.mandate, new Set(rows.map((r) => r.slug)))));
      }
      const readable = rows.length
        ? rows
            .map(
              (r) =>
                `${r.slug}\t${r.status ?? '-'}\t${r.roles.join(',')}\t${r.base}${r.about ? `\t${String(r.about).slice(0, 60)}` : ''}`,
            )
            .join('\n')
        : `no rooms saved in ${file}: create one (conclave room create) or join one (conclave room join <slug>)`;
      print(jsonOutput(command), { config: file, rooms: rows }, readable);
    });

  program
    .command('whoami [slug]')
    .description('the credentials this shell acts with: the config file, saved roles per room, the mandate')
    .action(async (slug: string | undefined, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const file = configPath();
      const config = await readConfig(file);
      const entries = Object.entries(config.rooms).filter(([s]) => slug === undefined || s === slug);
      const seats = entries.flatMap(([s, room]) =>
        SEAT_SLOTS.flatMap((slot) => {
          const seat = room[slot];
          if (!seat) return [];
          return [
            {
              slug: s,
              role: slot,
              participant_id: seat.participant_id ?? null,
              display_name: seat.display_name ?? null,
              saved_at: seat.saved_at ?? null,
            },
          ];
        }),
      );
      const mandate = globals.mandate ? mandateClaims(globals.mandate) : null;
      const body = {
        config: file,
        base: globals.base ?? config.base ?? DEFAULT_BASE,
        token_flag: globals.token ? 'set (--token or CONCLAVE_TOKEN), used before any saved token' : null,
        mandate,
        seats,
      };
      const lines = [`config: ${file}`, `service: ${body.base}`];
      if (body.token_flag) lines.push(`token: ${body.token_flag}`);
      if (mandate)
        lines.push(`mandate: ${mandate.sub ?? '?'} issued by ${mandate.iss ?? '?'}, expires ${mandate.exp ?? '?'}`);
      for (const seat of seats)
        lines.push(
          `${seat.slug}\t${seat.role === 'earlier' ? 'earlier (role not recorded by an older conclave)' : seat.role}\t${seat.participant_id ?? '-'}${seat.display_name ? ` (${seat.display_name})` : ''}`,
        );
      if (seats.length === 0 && !mandate && !body.token_flag)
        lines.push(slug ? `no token saved for ${slug}: run \`conclave room join ${slug}\`` : 'no tokens saved yet');
      print(jsonOutput(command), body, lines.join('\n'));
    });
}

function slotsOf(room: SavedRoom): SeatSlot[] {
  return SEAT_SLOTS.filter((slot) => room[slot] !== undefined);
}

/** The room as the service sees the seat of the first saved token (list_rooms answers per token). */
async function serviceView(base: string, slug: string, room: SavedRoom): Promise<Partial<RoomRow>> {
  const token = SEAT_SLOTS.map((slot) => room[slot]?.token).find((t) => t !== undefined);
  if (!token) return {};
  try {
    const listed = await new ConclaveClient({ baseUrl: base, token, timeoutMs: 10_000 }).listRooms();
    const found = (listed.rooms as Body[]).find((r) => r.slug === slug);
    return found ? { status: found.status, about: found.about, role: found.role } : { status: 'gone' };
  } catch (error) {
    if (error instanceof ConclaveError)
      return { status: error.code === 'auth.invalid_token' ? 'token not valid' : error.code };
    if (error instanceof ConclaveNetworkError) return { status: 'unreachable' };
    throw error;
  }
}

async function mandateRooms(base: string, mandate: string, known: Set<string>): Promise<RoomRow[]> {
  const listed = await new ConclaveClient({ baseUrl: base, mandate, timeoutMs: 10_000 }).listRooms();
  return (listed.rooms as Body[])
    .filter((r) => !known.has(r.slug))
    .map((r) => ({ slug: r.slug, base, roles: [], status: r.status, about: r.about, role: `${r.role} (mandate)` }));
}

/** The mandate's issuer, subject and expiry, read (not verified) from its payload. */
function mandateClaims(jws: string): { iss: string | null; sub: string | null; exp: string | null } {
  try {
    const claims = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Body;
    return {
      iss: typeof claims.iss === 'string' ? claims.iss : null,
      sub: typeof claims.sub === 'string' ? claims.sub : null,
      exp: typeof claims.exp === 'number' ? new Date(claims.exp * 1000).toISOString() : null,
    };
  } catch {
    return { iss: null, sub: null, exp: null };
  }
}
