/**
 * Which room `conclave verify` holds the receipts to (docs/receipts.md, Verifying): online, the room it
 * was asked about (its URL, or the slug on the service it reads from); offline, the room named with
 * `--room`, or, only with `--trust-file-room`, the room the saved file names for itself.
 */
import { ROOM_FROM_BODY } from '../client/index.js';
import { EXIT, Exit } from './shell.js';

export interface RoomOptions {
  room?: string;
  trustFileRoom?: boolean;
}

const NO_ROOM =
  'give --room <room url> (the room you mean, e.g. https://host/r/<slug>), or --trust-file-room to take the room the file names for itself';

/** Offline: the room the caller names, or the file's own room when they say so; never nothing. */
export function fileRoom(options: RoomOptions): string {
  if (options.room && options.trustFileRoom) throw new Exit(EXIT.usage, 'give --room or --trust-file-room, not both');
  if (options.trustFileRoom) return ROOM_FROM_BODY;
  if (!options.room) throw new Exit(EXIT.usage, NO_ROOM);
  return checkedRoomUrl(options.room);
}

/** Online: the room read (`<service>/r/<slug>`), unless --room names the URL the service signs with. */
export function onlineRoom(options: RoomOptions, base: string, slug: string): string {
  if (options.trustFileRoom) throw new Exit(EXIT.usage, '--trust-file-room goes with --file');
  return options.room ? checkedRoomUrl(options.room) : `${base}/r/${slug}`;
}

function checkedRoomUrl(raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !/\/r\/[^/]+\/*$/.test(url.pathname)) {
    throw new Exit(EXIT.usage, `--room ${JSON.stringify(raw)} is not a room URL: give http(s)://host[:port]/r/<slug>`);
  }
  return raw;
}
