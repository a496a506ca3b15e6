/**
 * Attack: half-sent requests. Connections that send half a request and stop hold a file descriptor
 * each and are never seen by the rate limiter; ~1,100 of them exhausted a 1,024-descriptor process,
 * and `@fastify/under-pressure` then crashed it with an uncaught EMFILE. Here the service runs as its
 * own process under `prlimit --nofile=1024:1024`, takes 1,100 such connections (from one address, and
 * spread over 22 addresses so the per-address cap does not save it), and must stay up and answer a
 * fresh /healthz from another loopback address throughout. ADVERSARY_HOLD_MS sets how long the flood
 * is held (30 s is the full attack; the default keeps `npm test` short).
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { type RunningService, startService } from '../support/service.js';

const HOLD_MS = Number(process.env.ADVERSARY_HOLD_MS ?? 6000);
const FLOOD = 1100;
const HALF_REQUEST = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';

const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;
if (!hasPrlimit && process.env.CI === 'true') throw new Error('prlimit is not on PATH, and CI requires this suite');

/** Opens one connection from `from` and sends half a request; resolves once connected (or refused). */
function halfRequest(port: number, from: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    socket.on('error', () => {});
    // Flowing, so a close by the server is seen ('end', then 'close').
    socket.resume();
    socket.once('connect', () => {
      socket.write(HALF_REQUEST);
      resolve(socket);
    });
    socket.once('close', () => resolve(socket));
  });
}

/**
 * Sends `first` at once, then a request one byte every 250 ms (never finishing it) until the server
 * closes the connection: what the server wrote, and how long after the trickle began it closed.
 */
function trickle(port: number, from: string, first: string) {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  const closed = new Promise<{ received: string; ms: number }>((resolve) => {
    socket.once('connect', () => {
      if (first) socket.write(first);
      const started = Date.now();
      let sent = 0;
      const dribble = setInterval(() => socket.write(HALF_REQUEST[sent++ % HALF_REQUEST.length]!), 250);
      socket.once('close', () => {
        clearInterval(dribble);
        resolve({ received, ms: Date.now() - started });
      });
    });
  });
  return { socket, closed };
}

/** GET on a fresh connection from a chosen loopback address: the status, or the network error's code. */
function probe(port: number, from: string, path = '/healthz', timeoutMs = 3000): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      { port, host: '127.0.0.1', path, localAddress: from, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end();
  });
}

/** Holds the flood for HOLD_MS, probing /healthz from a clean address every half second. */
async function holdAndProbe(service: ChildService, port: number): Promise<(number | string)[]> {
  const answers: (number | string)[] = [];
  const until = Date.now() + HOLD_MS;
  while (Date.now() < until) {
    expect(service.child.exitCode, service.output()).toBeNull();
    answers.push(await probe(port, '127.0.0.250'));
    await sleep(500);
  }
  expect(service.child.exitCode, service.output()).toBeNull();
  return answers;
}

describe.skipIf(!hasPrlimit)('1,100 half-sent requests against a 1,024-descriptor process', () => {
  let service: ChildService;
  let sockets: Socket[] = [];
  beforeAll(async () => {
    service = await spawnService({}, { capture: true, wrapper: ['prlimit', '--nofile=1024:1024'] });
  }, 60_000);
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await service?.stop();
  });
  const port = () => Number(new URL(service.base).port);

  it('from one address: the process stays up and answers a fresh /healthz throughout', async () => {
    sockets = await Promise.all(Array.from({ length: FLOOD }, () => halfRequest(port(), '127.0.0.1')));
    const answers = await holdAndProbe(service, port());
    expect(answers.length).toBeGreaterThan(0);
    expect(
      answers.every((a) => a === 200),
      JSON.stringify(answers),
    ).toBe(true);
    // The address's extra connections were shut at once, not held: it keeps only its cap.
    expect(sockets.filter((s) => !s.destroyed && !s.readableEnded).length).toBeLessThan(FLOOD / 2);
    for (const socket of sockets) socket.destroy();
  }, 120_000);

  it('spread over 22 addresses: the process stays up and a fresh /healthz is answered during the flood', async () => {
    sockets = await Promise.all(
      Array.from({ length: FLOOD }, (_, i) => halfRequest(port(), `127.0.1.${1 + (i % 22)}`)),
    );
    const answers = await holdAndProbe(service, port());
    expect(
      answers.every((a) => a === 200),
      JSON.stringify(answers),
    ).toBe(true);
    expect(service.output()).not.toMatch(/uncaught|EMFILE.*\n.*at /i);
    for (const socket of sockets) socket.destroy();
  }, 120_000);
});

describe('sockets: per-address cap and header timeout', () => {
  let svc: RunningService;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    svc = await startService({ env: { MAX_CONNECTIONS_PER_ADDRESS: '5', HEADERS_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await svc.stop();
  });
  const port = () => Number(new URL(svc.base).port);

  it('an address over MAX_CONNECTIONS_PER_ADDRESS has its new connection closed; other addresses are served', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => halfRequest(port(), '127.0.2.1')));
    sockets.push(...held);
    expect(await probe(port(), '127.0.2.1', '/healthz', 2000)).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    expect(await probe(port(), '127.0.2.2')).toBe(200);
    held[0]!.destroy();
    await sleep(100);
    expect(await probe(port(), '127.0.2.1')).toBe(200);
    for (const socket of held) socket.destroy();
  });

  it('a request whose headers do not arrive within HEADERS_TIMEOUT_MS gets 408 and is closed', async () => {
    const socket = await halfRequest(port(), '127.0.2.3');
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a client trickling its headers a byte at a time is cut off with 408 all the same', async () => {
    const { socket, closed } = trickle(port(), '127.0.2.5', '');
    sockets.push(socket);
    const { received, ms } = await closed;
    // Each byte arrives well within the timeout of the one before: only the whole head's deadline counts.
    expect(ms).toBeLessThan(4000);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a kept-alive connection that trickles its next request is cut off too', async () => {
    const { socket, closed } = trickle(port(), '127.0.2.6', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    sockets.push(socket);
    const { received, ms } = await closed;
    expect(ms).toBeLessThan(4000);
    expect(received).toMatch(/^HTTP\/1\.1 200[\s\S]*HTTP\/1\.1 408/);
  });

  it('a connection that sends nothing at all is closed too', async () => {
    const socket = connect({ port: port(), host: '127.0.0.1', localAddress: '127.0.2.4' });
    socket.on('error', () => {});
    // Flowing, so the server's FIN is seen as 'end' and then 'close'.
    socket.resume();
    sockets.push(socket);
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

/**
 * A client on the other end of a worker thread: opens `count` connections, and on 'write' sends each a
 * complete request, then sets the shared flag once every byte is handed to the kernel; reports the
 * first line each connection is answered with.
 */
const BURST_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { port, count, request } = workerData;
const flag = new Int32Array(workerData.flag);
const sockets = [];
const answers = [];
let connected = 0;
for (let i = 0; i < count; i++) {
  const socket = net.connect(port, '127.0.0.1', () => {
    if (++connected === count) parentPort.postMessage({ connected });
  });
  let line = null;
  const settle = (answer) => {
    if (line !== null) return;
    line = answer;
    answers.push(answer);
    if (answers.length === count) parentPort.postMessage({ answers });
  };
  socket.on('data', (chunk) => settle(chunk.toString('latin1').split('\\r\\n')[0]));
  socket.on('error', () => {});
  socket.on('close', () => settle('closed'));
  sockets.push(socket);
}
parentPort.on('message', (message) => {
  if (message === 'write') {
    let written = 0;
    for (const socket of sockets) socket.write(request, () => {
      if (++written === count) { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); }
    });
  }
  if (message === 'close') for (const socket of sockets) socket.destroy();
});
`;

describe('complete requests queued behind a busy event loop', () => {
  const HEADERS_TIMEOUT_MS = 1000;
  const COUNT = 50;
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('are served, not answered 408, however long the service took to read them', async () => {
    const server = svc.service.app.server;
    let accepted = 0;
    const count = () => accepted++;
    server.on('connection', count);
    const flag = new SharedArrayBuffer(4);
    const request = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const client = new Worker(BURST_CLIENT, {
      eval: true,
      workerData: { port: Number(new URL(svc.base).port), count: COUNT, request, flag },
    });
    const messages: Record<string, unknown>[] = [];
    const next = (key: string) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const found = messages.find((m) => key in m);
        if (found) return resolve(found);
        const listen = (message: Record<string, unknown>) => {
          messages.push(message);
          if (key in message) {
            client.off('message', listen);
            resolve(message);
          }
        };
        client.on('message', listen);
      });
    try {
      await next('connected');
      // Every connection accepted (its header clock running), none of them has sent a byte yet.
      while (accepted < COUNT) await sleep(10);
      server.off('connection', count);
      // The hold: the service's thread is busy while every request arrives whole, and stays busy until
      // each has been waiting well past the header timeout. Held in the loop's check phase, so its next
      // turn begins with the timers (the timeout checks, now overdue) before it reads a socket: what a
      // burst of opens does to a loaded process.
      const answers = next('answers');
      await new Promise((resolve) => setImmediate(resolve));
      client.postMessage('write');
      expect(Atomics.wait(new Int32Array(flag), 0, 0, 10_000)).not.toBe('timed-out');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 * HEADERS_TIMEOUT_MS);
      const { answers: lines } = (await answers) as { answers: string[] };
      const tally: Record<string, number> = {};
      for (const line of lines) tally[line] = (tally[line] ?? 0) + 1;
      expect(tally).toEqual({ 'HTTP/1.1 200 OK': COUNT });
    } finally {
      client.postMessage('close');
      await client.terminate();
    }
  });
});
