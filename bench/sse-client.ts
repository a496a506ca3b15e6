/**
 * The SSE load as its own process (forked by bench/cases/sse.ts): opens N event streams on raw
 * sockets to `SSE_URL` (the service's stream route, or the bare node:http floor), reports once every
 * stream has its status line, then the arrival instant of each stream's first `data:` frame. Raw
 * sockets keep the client's own cost per stream to a few bytes scanned per chunk.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const url = new URL(process.env.SSE_URL!);
const count = Number(process.env.SSE_STREAMS ?? 10_000);
const authorization = process.env.SSE_AUTHORIZATION;
const preciseNow = () => performance.timeOrigin + performance.now();

const request = Buffer.from(
  `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\naccept: text/event-stream\r\n` +
    (authorization ? `authorization: ${authorization}\r\n` : '') +
    '\r\n',
);
const arrivals: number[] = [];
const sockets: net.Socket[] = [];
let opened = 0;
let failed = 0;

let retried = 0;

/** One stream; a connection refused or reset before its status line (a full accept queue) is retried. */
function open(): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    let started = false;
    let arrived = false;
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (!started) {
        started = true;
        if (/^HTTP\/1\.1 (503|429|408)/.test(text)) {
          // The service sheds load while the streams open (docs/architecture.md, Back-pressure): try again.
          retried++;
          socket.destroy();
          void sleep(100).then(() => open().then(resolve));
          return;
        }
        sockets.push(socket);
        if (!text.startsWith('HTTP/1.1 200')) {
          failed++;
          if (failed === 1) console.error('sse client: first refusal', text.slice(0, 400));
        } else opened++;
        resolve();
      }
      if (!arrived && text.includes('\ndata: ')) {
        arrived = true;
        arrivals.push(preciseNow());
        if (arrivals.length === count) process.send!({ arrivals });
      }
    });
    const retry = () => {
      if (started) return;
      started = true;
      retried++;
      socket.destroy();
      void sleep(100).then(() => open().then(resolve));
    };
    socket.on('error', retry);
    socket.on('close', retry);
  });
}

const all: Promise<void>[] = [];
for (let sent = 0; sent < count; sent += 250) {
  for (let i = sent; i < Math.min(sent + 250, count); i++) all.push(open());
  await sleep(25);
}
const progress = setInterval(
  () => console.error(`sse client: ${opened} open, ${failed} refused, ${retried} retried of ${count}`),
  5000,
);
await Promise.all(all);
clearInterval(progress);
process.send!({ opened, failed, retried });
process.on('message', (message: { close?: boolean }) => {
  if (message.close) {
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  }
});
