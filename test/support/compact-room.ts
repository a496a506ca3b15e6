/**
 * A typical concluded room built through the real service, and every read of it as bytes, for the
 * compact-room tests (docs/architecture.md, Storage, "Compact rooms"): the same reads before and
 * after a compaction must answer the same bytes.
 */
import { seatedRoom } from './engagement.js';
import { call } from './service.js';

export interface ConcludedRoom {
  slug: string;
  /** tokens[0] is the creator's. */
  tokens: string[];
  /** The close was sent with this Idempotency-Key. */
  closeKey: string;
}

/** `members` seats, `decisions` decided decisions with `messages` messages in all, then closed. */
export async function concludedRoom(
  base: string,
  shape = { members: 4, decisions: 3, messages: 9 },
): Promise<ConcludedRoom> {
  const room = await seatedRoom(
    base,
    {
      question: 'Where do we meet?',
      options: ['north', 'south'],
      config: { type: 'persistent', early_close: true, settle_window: 0 },
    },
    shape.members,
  );
  let said = 0;
  for (let d = 0; d < shape.decisions; d++) {
    if (d > 0) {
      await call(base, 'POST', `/api/rooms/${room.slug}/ask`, {
        token: room.tokens[0],
        body: { question: `Decision ${d + 1}?`, options: ['alpha', 'beta'] },
      });
    }
    for (let i = 0; i < shape.messages / shape.decisions; i++, said++) {
      await call(base, 'POST', `/api/rooms/${room.slug}/discuss`, {
        token: room.tokens[said % shape.members],
        body: { body: `message ${said}` },
      });
    }
    for (const token of room.tokens) {
      const choice = d === 0 ? 'north' : 'alpha';
      await call(base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice } });
    }
  }
  const closeKey = `close-${room.slug}`;
  const closed = await closeRoom(base, { slug: room.slug, tokens: room.tokens, closeKey });
  if (!closed.startsWith('200 ')) throw new Error(`close failed: ${closed}`);
  return { slug: room.slug, tokens: room.tokens, closeKey };
}

/** The room's close, with its Idempotency-Key: sent again, it answers what the first one did. */
export async function closeRoom(base: string, room: ConcludedRoom): Promise<string> {
  const response = await fetch(`${base}/api/rooms/${room.slug}/close`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${room.tokens[0]}`,
      'idempotency-key': room.closeKey,
    },
    body: JSON.stringify({ statement: 'Done.' }),
  });
  return `${response.status} ${await response.text()}`;
}

async function text(base: string, path: string, token?: string, accept = 'application/json'): Promise<string> {
  const response = await fetch(`${base}${path}`, {
    headers: { accept, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  // What differs between any two reads: the request's id, and when a wait should poll again.
  const body = (await response.text())
    .replace(/"request_id":"[^"]*"/g, '"request_id":"-"')
    .replace(/"next_poll_at":"[^"]*"/g, '"next_poll_at":"-"');
  return `${response.status} ${body}`;
}

/**
 * Every read of the room, by path and reader: its views (creator, member, outsider; plain and full),
 * its events pages (small pages, so several), outcome, decisions, log positions, next action, and the
 * room page's HTML.
 */
export async function readEverything(base: string, room: ConcludedRoom): Promise<Record<string, string>> {
  const readers = { creator: room.tokens[0], member: room.tokens[1], outsider: undefined };
  const reads: Record<string, string> = {};
  const at = `/api/rooms/${room.slug}`;
  for (const [who, token] of Object.entries(readers)) {
    for (const path of [
      at,
      `${at}?include=full`,
      `${at}/outcome`,
      `${at}/decisions`,
      `${at}/log-positions`,
      `${at}/next-action`,
    ]) {
      reads[`${who} ${path}`] = await text(base, path, token);
    }
    for (let after = 0, page = 0; page < 50; page++) {
      const path = `${at}/events?since_seq=${after}&limit=7`;
      const answer = await text(base, path, token);
      reads[`${who} ${path}`] = answer;
      const body = JSON.parse(answer.slice(4)) as { events?: { seq: number }[]; has_more?: boolean };
      if (!body.has_more || !body.events?.length) break;
      after = body.events.at(-1)!.seq;
    }
    reads[`${who} /r/${room.slug}`] = await text(base, `/r/${room.slug}`, token, 'text/html');
    // The stream's backfill: a concluded room's stream sends its history and ends.
    reads[`${who} ${at}/events/stream?since_seq=0`] = await streamBackfill(
      base,
      `${at}/events/stream?since_seq=0`,
      token,
    );
  }
  return reads;
}

/** An SSE stream's frames up to the room's `room.concluded` (or what came within 3 s), as text. */
async function streamBackfill(base: string, path: string, token: string | undefined): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 3_000);
  let received = '';
  try {
    const response = await fetch(`${base}${path}`, {
      headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: controller.signal,
    });
    received = `${response.status} `;
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      received += decoder.decode(chunk as Uint8Array, { stream: true });
      if (received.includes('room.concluded')) break;
    }
  } catch {
    // Aborted after 3 s: what came is the answer.
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return received.replace(/"request_id":"[^"]*"/g, '"request_id":"-"');
}
