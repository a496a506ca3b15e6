/**
 * The slow-request defence (docs/architecture.md, Robustness at the edges: slow clients, busy turns)
 * on a real socket with an injected clock: the sweep is driven by hand, so every deadline is exact.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SlowRequestCut, SlowRequestGuard } from '../../../src/http/slow-requests.js';

const HEADERS_MS = 1000;
const REQUEST_MS = 3000;

describe('slow-request guard', () => {
  let server: Server;
  let guard: SlowRequestGuard;
  let now = 0;
  let stop: () => void;
  const sockets: Socket[] = [];
  let cuts: SlowRequestCut[] = [];

  beforeEach(async () => {
    now = 0;
    // Answers once the body has arrived (a GET at once); never answers a body that does not.
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    server.headersTimeout = 0;
    server.requestTimeout = 0;
    guard = new SlowRequestGuard({ headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS, now: () => now });
    cuts = [];
    guard.report = (cut) => cuts.push(cut);
    stop = guard.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Connects, sends `text`, and collects what comes back until the server closes. */
  async function client(text: string) {
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    await new Promise<void>((resolve) => socket.write(text, () => resolve()));
    // Let the server read what was sent.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    return { socket, closed, received: () => received };
  }

  it('cuts off a head that has not arrived by the header deadline, not a moment before', async () => {
    const { socket, closed, received } = await client('GET / HTTP/1.1\r\nHost: x\r\n');
    now = HEADERS_MS - 1;
    await guard.sweep();
    expect(socket.destroyed).toBe(false);
    expect(cuts).toEqual([]);
    now = HEADERS_MS;
    await guard.sweep();
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 408/);
    expect(cuts).toEqual([{ limit: 'headers', remoteAddress: '127.0.0.1', timeoutMs: HEADERS_MS, answered408: true }]);
  });

  it('cuts off a body that has not arrived by the request deadline, counted from the connection', async () => {
    const { closed, received } = await client('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345');
    now = REQUEST_MS - 1;
    await guard.sweep();
    expect(guard.tracked).toBe(1);
    now = REQUEST_MS;
    await guard.sweep();
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 408/);
    expect(cuts).toEqual([{ limit: 'request', remoteAddress: '127.0.0.1', timeoutMs: REQUEST_MS, answered408: true }]);
  });

  it('leaves alone a request that arrived whole, and an idle kept-alive connection, however late', async () => {
    const { socket, received } = await client('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    now = 10 * REQUEST_MS;
    await guard.sweep();
    expect(socket.destroyed).toBe(false);
    expect(received()).toMatch(/^HTTP\/1\.1 200/);
    expect(guard.tracked).toBe(1);
    expect(cuts).toEqual([]);
  });
});
