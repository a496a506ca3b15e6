/** Replay cursors (docs/agents.md, The REST loop): an event id takes precedence over a seq; an unknown id is refused. */
import { z } from 'zod';
import { invalidInput } from '../errors.js';
import type { RoomStore } from '../store/port.js';

export const sinceSeqSchema = z
  .union([z.number().int().min(0), z.string().regex(/^[0-9]{1,15}$/, 'must be a non-negative integer event seq')])
  .transform(Number)
  .describe('Start after this event seq: only events with a greater seq are returned.');

export const sinceEventIdSchema = z
  .string()
  .min(1)
  .max(100)
  .describe('Start after the event with this id; takes precedence over since_seq.');

/** The seq after which to serve: the event named by id, else `sinceSeq`, else `fallback`. */
export async function cursorSeq(
  store: RoomStore,
  slug: string,
  cursor: { eventId?: string | undefined; field?: string; sinceSeq?: number | undefined },
  fallback: number,
): Promise<number> {
  if (cursor.eventId !== undefined) {
    const event = await store.eventById(slug, cursor.eventId);
    if (!event) {
      const field = cursor.field ?? 'since_event_id';
      throw invalidInput(
        field,
        `${field} names no event of room ${slug}. Send an event id from this room's events, or page by since_seq instead (GET /api/rooms/${slug}/events).`,
        'invalid_value',
      );
    }
    return event.seq;
  }
  return cursor.sinceSeq ?? fallback;
}
