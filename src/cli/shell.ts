/**
 * What every `conclave` command shares: the exit codes, the global options, which service and which
 * stored token a command acts with, printing (tokens masked), and the service's errors rephrased for
 * a shell user (flags and commands to run, not HTTP headers).
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type Body, ConclaveClient, type ConclaveError } from '../client/index.js';
import { configPath, pickSeat, readConfig, type SavedSeat, type SeatRole, type SeatSlot } from './credentials.js';

/** The exit codes, documented in `conclave --help` and docs/cli.md. */
export const EXIT = {
  ok: 0,
  /** Receipts did not verify. Nothing else uses 1, so a script can trust it. */
  verificationFailed: 1,
  usage: 2,
  refused: 3,
  unreachable: 4,
  timeout: 5,
  /** A local file, credential or data directory is in the way (or an unexpected failure). */
  local: 6,
  /** `wait --for completion` on a closed room: nothing will seal again, so waiting longer is pointless. */
  concluded: 7,
} as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  verification failed: a receipt, signature, hash, link or replay did not verify
  2  usage error: unknown command or flag, a bad value (e.g. --base notaurl, --timeout abc)
  3  the service refused: its error code is printed (e.g. room.not_found, authority.denied)
  4  the service could not be reached
  5  timed out: nothing happened within --timeout (wait), or the service did not answer in time
  6  a local problem: the credentials file, a data directory, a backup or migration refused or failed
  7  nothing to wait for: the room is closed, so no decision will seal again (wait --for completion)
`;

export const DEFAULT_BASE = 'http://127.0.0.1:3000';

export interface GlobalOptions {
  base?: string;
  token?: string;
  mandate?: string;
  json?: boolean;
  as?: SeatRole;
}

/** A failure that ends the command with this exit code and message. */
export class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Which credential the last room command acted with, so that an auth error can say what to do
 * next: join, pass --token, or use the creator token.
 */
export interface Acting {
  slug: string | undefined;
  slot: SeatSlot | 'flag' | null;
  configFile: string;
}
let acting: Acting | null = null;
export const lastActing = (): Acting | null => acting;

/**
 * Host actions (close, invite, ask, start choosing, delete) prefer the creator token; everything else
 * prefers the participant token. `--as` picks the role outright; `--token` wins over both.
 */
export async function context(command: Command, slug?: string, prefer: SeatRole | 'none' = 'participant') {
  const options = command.optsWithGlobals<GlobalOptions>();
  const configFile = configPath();
  const config = await readConfig(configFile);
  const room = slug ? config.rooms[slug] : undefined;
  const base = serviceBase(command, options.base ?? room?.base ?? config.base ?? DEFAULT_BASE);
  let seat: { slot: SeatSlot; seat: SavedSeat } | null = null;
  if (!options.token && slug && prefer !== 'none') {
    if (options.as) {
      const saved = room?.[options.as];
      if (!saved)
        throw new Exit(EXIT.usage, `no ${options.as} token saved for ${slug} in ${configFile}: pass --token instead`);
      seat = { slot: options.as, seat: saved };
    } else {
      seat = pickSeat(room, prefer);
    }
  }
  const token = options.token ?? seat?.seat.token;
  acting = { slug, slot: options.token ? 'flag' : (seat?.slot ?? null), configFile };
  const client = new ConclaveClient({
    baseUrl: base,
    ...(token ? { token } : {}),
    ...(options.mandate ? { mandate: options.mandate } : {}),
  });
  return { client, base, json: options.json === true, configFile, config, seat };
}

/** The service URL, checked before anything is sent: a malformed one is a usage error (2), not "unreachable". */
export function serviceBase(command: Command, raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const source = command.getOptionValueSourceWithGlobals?.('base') === 'env' ? 'CONCLAVE_URL' : '--base';
    throw new Exit(
      EXIT.usage,
      `${source} ${JSON.stringify(raw)} is not a service URL: give http(s)://host[:port], e.g. ${DEFAULT_BASE}`,
    );
  }
  return raw.replace(/\/+$/, '');
}

export function jsonOutput(command: Command): boolean {
  return command.optsWithGlobals<GlobalOptions>().json === true;
}

const SECRET_FIELDS = new Set([
  'creator_token',
  'participant_token',
  'token',
  'invite_token',
  'signing_secret',
  'access_token',
]);

export function print(json: boolean, body: unknown, readable: string): void {
  console.log(json ? JSON.stringify(masked(body), null, 2) : readable);
}

/** Credentials never reach the terminal: they are stored in the config file instead. */
export function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      SECRET_FIELDS.has(key) && typeof member === 'string' ? '[saved]' : masked(member),
    ]),
  );
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Exit(EXIT.usage, `${what} is not valid JSON`);
  }
}

/** A commander argument parser for a positive number (seconds, counts): anything else exits 2. */
export function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a positive number');
  return number;
}

/** A commander argument parser for a whole number of seconds. */
export function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) throw new InvalidArgumentError('expected a whole number of seconds');
  return number;
}

/** A commander argument parser for a whole number ≥ 1 (counts, quorums). */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return number;
}

/** A commander argument parser for a non-negative integer (cursors, sequence numbers). */
export function count(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('expected a whole number ≥ 0');
  return number;
}

export function summary(body: Body): string {
  if (typeof body.status === 'string') return body.status;
  if (typeof body.id === 'string') return body.id;
  return 'done';
}

/**
 * The service's refusal as a shell user can act on it: the code, then what to run or pass. The
 * service's own wording speaks of HTTP headers (it answers agents too); here it becomes flags.
 */
export function refusalMessage(error: ConclaveError, at: Acting | null): string {
  const slug = at?.slug ?? '<slug>';
  const join = `run \`conclave room join ${slug}\``;
  const where =
    at?.slot === 'flag' ? '--token (or CONCLAVE_TOKEN)' : `the ${at?.slot ?? ''} token saved in ${at?.configFile}`;
  switch (error.code) {
    case 'auth.required':
    case 'room.join_required':
      return `${error.code}: this needs a seat in ${slug}: ${join}, or pass --token <token> (or set CONCLAVE_TOKEN)`;
    case 'auth.invalid_token':
    case 'participant.token_superseded':
      return `${error.code}: ${where} is not valid for ${slug}: ${join} for a new seat, or pass --token <token> of this room`;
    case 'authority.denied':
      return `${error.code}: ${shellWords(error.message)}\n  this needs the room's creator token (saved by \`conclave room create\`; use --as creator) or the service's admin token (--token)`;
    case 'auth.mandate_required':
      return `${error.code}: this room acts under mandates only: pass --mandate <jws> (or set CONCLAVE_MANDATE)`;
    case 'auth.invalid_password':
      return `${error.code}: the room password is wrong: pass the right one with --password`;
    default:
      return `${error.code} (${error.status}): ${shellWords(error.message)}${error.hint ? `\n  hint: ${shellWords(error.hint)}` : ''}`;
  }
}

/** Header and route wording of the service's messages, as the flags that send them. */
export function shellWords(text: string): string {
  return text
    .replace(/(?:send\s+)?Authorization: Bearer <([^>]+)>/gi, 'pass --token <$1>')
    .replace(/a mandate in X-Mandate/gi, 'a mandate with --mandate')
    .replace(/X-Mandate/g, '--mandate')
    .replace(/\(POST \/api\/rooms\/([^/\s]+)\/join\)/g, '(`conclave room join $1`)');
}
