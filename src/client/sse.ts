/**
 * A room's events as an async iterator over Server-Sent Events (docs/agents.md, The REST loop). When the connection drops,
 * it reconnects with `Last-Event-ID` set to the last event it yielded, so the server resumes right
 * after it: no gap and no duplicate. Ends when the caller's signal aborts or the loop breaks.
 */
import { ConclaveNetworkError } from './errors.js';
import { type CallOptions, credentialHeaders, errorFrom, pause, type TransportOptions } from './transport.js';

export interface RoomEvent {
  /** The SSE `id`: resume after it with Last-Event-ID. */
  id: string;
  /** The SSE `event`: the event type. */
  event: string;
  /** The event as the events log serves it. */
  // biome-ignore lint/suspicious/noExplicitAny: the event as served, read by field
  data: Record<string, any>;
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

export async function* streamEvents(options: TransportOptions, input: StreamEventsInput): AsyncGenerator<RoomEvent> {
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
      for await (const frame of frames(response.body!)) {
        if (frame.retry !== undefined) retryMs = frame.retry;
        if (frame.data === undefined) continue;
        if (frame.id !== undefined) lastEventId = frame.id;
        yield { id: frame.id ?? '', event: frame.event ?? 'message', data: JSON.parse(frame.data) };
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

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

/** Parses an SSE byte stream into frames (WHATWG "event stream interpretation", the parts used here). */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame> {
  // Node's and the DOM's typings of TextDecoderStream differ in their writable side; both decode bytes.
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, '\n');
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame) yield frame;
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

function parseFrame(text: string): Frame | null {
  const frame: Frame = {};
  const data: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
  }
  if (data.length > 0) frame.data = data.join('\n');
  return frame.id === undefined && frame.data === undefined && frame.retry === undefined ? null : frame;
}
