/**
 * Where the command line keeps credentials: flags and environment first, then a per-user file
 * (mode 0600) holding the service URL and, per room, one token per role: the creator's (which is also
 * the room's operator credential) and a participant's. Joining a room you created adds a participant
 * seat beside the creator token instead of replacing it. Tokens are written there instead of being
 * printed.
 *
 * Format 2 (`"version": 2`). Files written before it (no version) held one token per room whose role
 * was not recorded: they are read as that room's `earlier` seat, used for either role until a token of
 * the role is saved, and rewritten in format 2 on the next save.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export const CONFIG_VERSION = 2;

/** The role a stored token acts in: `creator` also holds the room's operator authority. */
export type SeatRole = 'creator' | 'participant';
/** Where a token sits in the file: a role, or `earlier` for a token saved before roles were recorded. */
export type SeatSlot = SeatRole | 'earlier';

export interface SavedSeat {
  token: string;
  participant_id?: string;
  display_name?: string;
  /** ISO time of the save; absent for tokens migrated from the older format. */
  saved_at?: string;
}

export interface SavedRoom {
  base?: string;
  creator?: SavedSeat;
  participant?: SavedSeat;
  earlier?: SavedSeat;
}

export interface CliConfig {
  version: typeof CONFIG_VERSION;
  base?: string;
  rooms: Record<string, SavedRoom>;
}

export const SEAT_SLOTS: readonly SeatSlot[] = ['creator', 'participant', 'earlier'];

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONCLAVE_CONFIG) return env.CONCLAVE_CONFIG;
  const root = env.XDG_CONFIG_HOME ?? path.join(homedir(), '.config');
  return path.join(root, 'conclave', 'config.json');
}

/** The file's credentials in format 2, whatever format it was written in. Never writes. */
export async function readConfig(file: string): Promise<CliConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: CONFIG_VERSION, rooms: {} };
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON: fix or remove it (it holds your room tokens)`);
  }
  return upgradeConfig(raw, file);
}

/** Reads any known format into format 2 (see the module comment). */
export function upgradeConfig(raw: unknown, file: string): CliConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`${file} is not a conclave config`);
  const value = raw as { version?: unknown; base?: unknown; rooms?: unknown };
  if (value.version !== undefined && value.version !== CONFIG_VERSION) {
    throw new Error(`${file} has format ${String(value.version)}, written by a newer conclave: upgrade this one`);
  }
  const config: CliConfig = {
    version: CONFIG_VERSION,
    ...(typeof value.base === 'string' ? { base: value.base } : {}),
    rooms: {},
  };
  const rooms = value.rooms !== null && typeof value.rooms === 'object' ? (value.rooms as Record<string, unknown>) : {};
  for (const [slug, entry] of Object.entries(rooms)) {
    if (entry === null || typeof entry !== 'object') continue;
    config.rooms[slug] = value.version === undefined ? fromFormat1(entry) : fromFormat2(entry);
  }
  return config;
}

/** Format 1: `{ token, base }`, the role unknown (create and join both wrote it). */
function fromFormat1(entry: object): SavedRoom {
  const { token, base } = entry as { token?: unknown; base?: unknown };
  return {
    ...(typeof base === 'string' ? { base } : {}),
    ...(typeof token === 'string' ? { earlier: { token } } : {}),
  };
}

function fromFormat2(entry: object): SavedRoom {
  const source = entry as Record<string, unknown>;
  const room: SavedRoom = typeof source.base === 'string' ? { base: source.base } : {};
  for (const slot of SEAT_SLOTS) {
    const seat = source[slot] as SavedSeat | undefined;
    if (seat && typeof seat.token === 'string') room[slot] = seat;
  }
  return room;
}

/** Writes the file readable by its owner only (0600), its folder 0700, whole or not at all. */
export async function writeConfig(file: string, config: CliConfig): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(temporary, 0o600);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** A token already saved in this role for this room: saving another would lose it. */
export class SeatTaken extends Error {
  constructor(
    readonly slug: string,
    readonly role: SeatRole,
    readonly seat: SavedSeat,
  ) {
    super(`a ${role} token for ${slug} is already saved`);
  }
}

/**
 * Saves a token in its role's slot, keeping the room's other roles. Refuses (SeatTaken) to replace a
 * token of the same role unless `replace` is set. Returns the file's new content.
 */
export async function saveSeat(
  file: string,
  slug: string,
  role: SeatRole,
  seat: Omit<SavedSeat, 'saved_at'>,
  options: { base: string; replace?: boolean; now?: Date },
): Promise<CliConfig> {
  const config = await readConfig(file);
  const room = config.rooms[slug] ?? {};
  const existing = room[role];
  if (existing && existing.token !== seat.token && !options.replace) throw new SeatTaken(slug, role, existing);
  config.rooms[slug] = {
    ...room,
    base: options.base,
    [role]: { ...seat, saved_at: (options.now ?? new Date()).toISOString() },
  };
  await writeConfig(file, config);
  return config;
}

/**
 * The stored token to act with: the preferred role's, then an `earlier` token of unknown role, then
 * the other role's (a creator is seated too, and a participant's token is better than none).
 */
export function pickSeat(room: SavedRoom | undefined, prefer: SeatRole): { slot: SeatSlot; seat: SavedSeat } | null {
  if (!room) return null;
  const other: SeatRole = prefer === 'creator' ? 'participant' : 'creator';
  for (const slot of [prefer, 'earlier', other] as const) {
    const seat = room[slot];
    if (seat) return { slot, seat };
  }
  return null;
}
