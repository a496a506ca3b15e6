/** A minimal server-sent events client for tests: frames as they arrive, and a way to hang up. */
import { setTimeout as sleep } from 'node:timers/promises';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comments: string[];
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** The JSON error body when the stream did not start. */
  error: any;
  frames: SseFrame[];
  /** Resolves once at least `count` frames have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<SseFrame[]>;
  /** True once the server ended the stream. */
  ended(): boolean;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  let done = false;
  let error: any = null;
  if (response.status !== 200) {
    error = await response.json();
    done = true;
  } else {
    void (async () => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for (;;) {
          const { value, done: finished } = await reader.read();
          if (finished) break;
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            frames.push(parseFrame(buffer.slice(0, end)));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        // aborted by close()
      } finally {
        done = true;
      }
    })();
  }
  return {
    status: response.status,
    headers: response.headers,
    error,
    frames,
    async waitFor(count, timeoutMs = 5000) {
      const giveUpAt = Date.now() + timeoutMs;
      while (frames.length < count) {
        if (Date.now() > giveUpAt) throw new Error(`only ${frames.length} of ${count} frames within ${timeoutMs} ms`);
        await sleep(5);
      }
      return frames;
    },
    ended: () => done,
    close: () => controller.abort(),
  };
}

function parseFrame(text: string): SseFrame {
  const frame: SseFrame = { comments: [] };
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) frame.data = line.slice(6);
  }
  return frame;
}
