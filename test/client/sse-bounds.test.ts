/**
 * The SSE iterator against a hostile server: an event line that never ends must not grow the
 * client's buffer without bound; the stream is dropped once the line passes MAX_EVENT_CHARS.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConclaveClient, ConclaveNetworkError } from '../../src/client/index.js';
import { MAX_EVENT_CHARS } from '../../src/client/sse.js';

describe('the SSE iterator against an endless event', () => {
  let server: Server;
  let base: string;
  let sent = 0;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('id: 1\ndata: {"seq":1}\n\ndata: ');
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (sent < MAX_EVENT_CHARS * 4 && !response.destroyed) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      response.on('close', () => undefined);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('yields the events before it, then drops the stream once the line passes the bound', async () => {
    const client = new ConclaveClient({ baseUrl: base });
    const seen: unknown[] = [];
    const ended = await (async () => {
      for await (const event of client.streamEvents({ slug: 'room', reconnect: false })) seen.push(event.data);
    })().catch((error: unknown) => error);
    expect(seen).toEqual([{ seq: 1 }]);
    expect(ended).toBeInstanceOf(ConclaveNetworkError);
    expect((ended as Error).message).toBe('The event stream dropped.');
    // It stopped reading well before the server ran out of line to send.
    expect(sent).toBeLessThan(MAX_EVENT_CHARS * 4);
  });
});
