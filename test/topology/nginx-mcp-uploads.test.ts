/**
 * What MCP uploads can take of nginx's disk (deploy/nginx/nginx.conf.template, location /mcp).
 * `/mcp` bodies are read whole before a process is chosen, and one over the 128k buffer goes to a
 * temp file. Attacks: a body larger than the service would ever accept, stored anyway; many large
 * uploads held open from one address, each file kept while it trickles; an upload that stops
 * sending. Against a tiny backend that counts what reaches it, on loopback.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/child-service.js';
import { hasNginx, type Nginx, startNginx } from '../support/topology.js';

const MiB = 1024 * 1024;
/** The start of a discuss call whose message text follows. */
const DISCUSS_START = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"discuss","arguments":{"body":"';

/** Opens a POST /mcp that declares `length` bytes, sends its headers and `sent` bytes of body, and stays open. */
async function heldUpload(base: string, length: number, sent: number): Promise<Socket> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n` +
      DISCUSS_START.padEnd(sent, 'x'),
  );
  return socket;
}

describe.skipIf(!hasNginx)('MCP uploads through the shipped nginx template', () => {
  let backend: Server;
  let reached = 0;
  let nginx: Nginx;

  const post = (body: string) =>
    fetch(`${nginx.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  /** A whole discuss call of 150,000 characters: over the 100,000 bytes that count as a large upload. */
  const largeCall = (fill: string) => post(`${DISCUSS_START}${fill.repeat(150_000)}"}}}`);

  beforeAll(async () => {
    const port = await freePort();
    backend = createServer((request, response) => {
      reached++;
      request.resume();
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end('{"jsonrpc":"2.0","id":1,"result":{}}');
      });
    });
    await new Promise<void>((resolve) => backend.listen(port, '127.0.0.1', resolve));
    nginx = await startNginx([`127.0.0.1:${port}`]);
  });
  afterAll(async () => {
    await nginx?.stop();
    backend?.closeAllConnections();
    await new Promise((resolve) => backend?.close(resolve));
  });

  it('refuses a body over the service’s 4 MiB limit before storing it, with the service’s envelope', async () => {
    const before = reached;
    const response = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"${'a'.repeat(4 * MiB)}"}}`,
    );
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error.code).toBe('input.invalid');
    expect(body.error.message).toContain('4 MiB');
    expect(body.error.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(reached).toBe(before);
    // Exactly at the limit it still goes through, as the service accepts it.
    const atLimit = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`;
    const padded = `${atLimit}${'a'.repeat(4 * MiB - atLimit.length - 3)}"}}`;
    expect(padded.length).toBe(4 * MiB);
    const accepted = await post(padded);
    expect(accepted.status).toBe(200);
    expect(reached).toBe(before + 1);
  });

  it('holds at most 16 large uploads of one address at once; small calls from it are not held back', async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 16; i++) held.push(await heldUpload(nginx.base, 2 * MiB, 200_000));
      // nginx counts a connection once it has read the request's header.
      await sleep(200);
      const refused = await largeCall('b');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      const envelope = (await refused.json()) as { error: { code: string; details: Record<string, number | string> } };
      expect(envelope.error.code).toBe('rate_limit.exceeded');
      expect(envelope.error.details).toMatchObject({ scope: 'ip', limit: 16, retry_after_seconds: 1 });
      // An ordinary call of a few hundred bytes from the same address goes through meanwhile.
      const small = await post('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
      expect(small.status).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Once they end, a large upload is taken again.
    await sleep(200);
    const later = await largeCall('c');
    expect(later.status).toBe(200);
  });

  it('drops an upload that stops sending for 15 s', async () => {
    const socket = await heldUpload(nginx.base, 2 * MiB, 200_000);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    const started = performance.now();
    const text = await answer;
    const seconds = (performance.now() - started) / 1000;
    // nginx answers 408 to a body timeout, or simply closes; either way the file goes with it.
    expect(text === '' || text.startsWith('HTTP/1.1 408')).toBe(true);
    expect(seconds).toBeGreaterThan(13);
    expect(seconds).toBeLessThan(30);
  }, 40_000);
});
