/**
 * A reconnect storm as its own process (forked by bench/cases/sse.ts and long-polls.ts): opens N
 * requests to `BURST_URL` in one burst, all at once on raw sockets, as a restart or a network blip
 * makes every client reconnect together. Raw sockets keep the client's own cost per request to a few
 * bytes scanned per chunk.
 *   BURST_MODE=stream     an SSE stream each: "open" is its status line, "arrival" its first data frame
 *   BURST_MODE=long-poll  a parked GET each: "arrival" is its answer's status line
 * A 503 or 429 is retried after its Retry-After (what the service asks of a client it cannot take yet);
 * a 408 is counted and not retried (the service timed out a request it had been sent whole). Reports
 * `{ settled }` once every request has an outcome (stream mode) and `{ arrivals }` once every request
 * that can still deliver one has (the parent asks with `{ collect: deadlineMs }` after its trigger).
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const url = new URL(process.env.BURST_URL!);
const count = Number(process.env.BURST_COUNT ?? 10_000);
const mode = process.env.BURST_MODE === 'long-poll' ? 'long-poll' : 'stream';
const authorization = process.env.BURST_AUTHORIZATION;
const preciseNow = () => performance.timeOrigin + performance.now();

const request = Buffer.from(
  `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\naccept: ${mode === 'stream' ? 'text/event-stream' : 'application/json'}\r\n` +
    (authorization ? `authorization: ${authorization}\r\n` : '') +
    '\r\n',
);

/** How the burst went, by outcome. */
const tally = { opened: 0, timedOut: 0, refused: 0, failed: 0, retried: 0, reconnected: 0 };
const arrivals: number[] = [];
const sockets: net.Socket[] = [];
let collecting = false;

const retryAfter = (head: string) => Number(/\r\nretry-after: (\d+)/i.exec(head)?.[1] ?? 1) * 1000;

/** One request; resolves once it has an outcome (a stream's status line, a long-poll's refusal or answer). */
function open(): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    let head = '';
    let settled = false;
    let arrived = false;
    const settle = () => {
      settled = true;
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (!settled) {
        head += text;
        const status = Number(head.slice(9, 12));
        if (status === 503 || status === 429) {
          // The service sheds what it cannot take (docs/operators.md): come back when it says.
          tally.retried++;
          settled = true;
          socket.destroy();
          void sleep(retryAfter(head)).then(() => open().then(resolve));
          return;
        }
        if (status === 408) tally.timedOut++;
        else if (status === 200) tally.opened++;
        else {
          tally.failed++;
          if (tally.failed === 1) console.error('burst client: first refusal', head.slice(0, 400));
        }
        sockets.push(socket);
        if (mode === 'stream' || status !== 200) settle();
      }
      const arrival = mode === 'stream' ? text.includes('\ndata: ') : text.startsWith('HTTP/1.1 200');
      if (!arrived && arrival) {
        arrived = true;
        arrivals.push(preciseNow());
        settle();
        report();
      }
    });
    // Refused or reset before any answer (a full accept queue): the kernel's, not the service's; again.
    const again = () => {
      if (settled || head) return;
      settled = true;
      tally.reconnected++;
      socket.destroy();
      void sleep(100).then(() => open().then(resolve));
    };
    socket.on('error', again);
    socket.on('close', again);
  });
}

/** Sends the arrivals once every request that can still deliver one has (once). */
function report(): void {
  const expected = mode === 'stream' ? tally.opened : count - tally.timedOut - tally.failed;
  if (collecting && arrivals.length >= expected) send();
}

let sent = false;
function send(): void {
  if (sent) return;
  sent = true;
  process.send!({ arrivals, tally });
}

// All at once, but yielding to the loop every few hundred: a connection the service accepted while
// this process was still busy creating the rest would sit silent, and a client that keeps a connection
// silent past the header timeout is rightly cut off (src/http/slow-requests.ts).
const all: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  all.push(open());
  if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
}
const progress = setInterval(() => console.error('burst client:', JSON.stringify(tally)), 5000);
if (mode === 'stream') {
  await Promise.all(all);
  process.send!({ settled: tally });
}
process.on('message', (message: { collect?: number; close?: boolean }) => {
  if (message.collect !== undefined) {
    collecting = true;
    report();
    // Whatever has not arrived by the parent's deadline never will: report without it.
    setTimeout(send, message.collect).unref();
  }
  if (message.close) {
    clearInterval(progress);
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  }
});
