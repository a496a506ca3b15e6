/**
 * History read back from append-only storage. A room's live state keeps counters and the newest
 * messages only; full reads rebuild the discussion from its `discussion.posted` events.
 */
import type { Message, Stance } from '../domain/types.js';
import type { RoomStore, StoredEvent } from '../store/port.js';

const PAGE = 1000;

/** The room's stored events, oldest first, up to event `head`, read page by page. */
export async function* eventsUpTo(store: RoomStore, slug: string, head: number): AsyncGenerator<StoredEvent> {
  for (let after = 0; after < head; ) {
    const page = await store.events(slug, after, PAGE);
    if (page.length === 0) return;
    for (const event of page) {
      if (event.seq > head) return;
      yield event;
    }
    after = page.at(-1)!.seq;
  }
}

/** Every message posted in the room, oldest first, up to event `head`. */
export async function discussionOf(store: RoomStore, slug: string, head: number): Promise<Message[]> {
  const messages: Message[] = [];
  for await (const event of eventsUpTo(store, slug, head)) {
    if (event.event_type === 'discussion.posted') messages.push(messageOf(event));
  }
  return messages;
}

/** The message a `discussion.posted` event records (the event carries every field). */
export function messageOf(event: StoredEvent): Message {
  const data = event.data as {
    id: string;
    participant_id: string | null;
    display_name: string;
    body: string;
    stance?: Stance;
    posted_at: string;
    decision_id: string | null;
    seq?: number;
  };
  return {
    id: data.id,
    participantId: data.participant_id,
    displayName: data.display_name,
    body: data.body,
    stance: data.stance ?? null,
    postedAt: Date.parse(data.posted_at),
    decisionId: data.decision_id,
    decisionSeq: data.seq ?? null,
  };
}
