/**
 * A room's events as an async iterator over Server-Sent Events (docs/agents.md, The REST loop). When the connection drops,
 * it reconnects with `Last-Event-ID` set to the last event it yielded, so the server resumes right
 * after it: no gap and no duplicate. Ends when the caller's signal aborts or the loop breaks.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ConclaveNetworkError } from './errors.js';
import { type CallOptions, credentialHeaders, errorFrom, pause, type TransportOptions } from './transport.js';
import type { RoomEvent } from './types/generated.js';

/** One Server-Sent Event of a room's stream. */
export interface StreamedEvent {
  /** The SSE `id`: resume after it with Last-Event-ID. */
  id: string;
  /** The SSE `event`: the event type. */
  event: string;
  /** The event, as the events log serves it. */
  data: RoomEvent;
}

export interface StreamEventsInput extends CallOptions {
  slug: string;
  /** Start after this event seq (the first connection only). */
  since_seq?: number;
  /** Resume after this event id, as after a dropped connection. */
  lastEventId?: string;
  /** Reconnect after a dropped connection (default true). */
  reconnect?: boolean;
}

const DEFAULT_RETRY_MS = 500;
/**
 * The most characters one event may hold before the stream is dropped: the largest the service sends
 * (a 500 000-character option, JSON-escaped) fits several times over, and a stream that never ends
 * its line cannot grow the buffer without bound.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

export async function* streamEvents(
  options: TransportOptions,
  input: StreamEventsInput,
): AsyncGenerator<StreamedEvent> {
  let lastEventId = input.lastEventId;
  let retryMs = DEFAULT_RETRY_MS;
  const signal = input.signal;
  for (let first = true; ; first = false) {
    const query =
      first && input.since_seq !== undefined && lastEventId === undefined ? `?since_seq=${input.since_seq}` : '';
    let response: Response;
    try {
      response = await options.fetch(
        `${options.baseUrl}/api/rooms/${encodeURIComponent(input.slug)}/events/stream${query}`,
        {
          headers: {
            accept: 'text/event-stream',
            ...credentialHeaders(input.auth ?? options.defaultAuth),
            ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}),
          },
          ...(signal ? { signal } : {}),
        },
      );
    } catch (error) {
      if (signal?.aborted) return;
      if (input.reconnect === false)
        throw new ConclaveNetworkError('network', 'The event stream could not be opened.', { cause: error });
      await pause(retryMs, signal).catch(() => undefined);
      if (signal?.aborted) return;
      continue;
    }
    if (!response.ok) throw errorFrom(response, await response.text());
    try {
      const messages = response
        .body!.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
        .pipeThrough(
          new EventSourceParserStream({
            maxBufferSize: MAX_EVENT_CHARS,
            onRetry: (ms) => {
              retryMs = ms;
            },
          }),
        );
      for await (const message of iterate(messages)) {
        if (message.id !== undefined) lastEventId = message.id;
        yield { id: message.id ?? '', event: message.event ?? 'message', data: JSON.parse(message.data) as RoomEvent };
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (input.reconnect === false)
        throw new ConclaveNetworkError('network', 'The event stream dropped.', { cause: error });
    }
    if (signal?.aborted || input.reconnect === false) return;
    await pause(retryMs, signal).catch(() => undefined);
    if (signal?.aborted) return;
  }
}

/**
 * Reads a stream to its end, cancelling it when the loop stops early. Browsers do not all make
 * ReadableStream async-iterable yet, so this reads it by hand.
 */
async function* iterate<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
