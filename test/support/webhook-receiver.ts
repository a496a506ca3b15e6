/** A local webhook receiver on loopback that records every request, and can go down and come back. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** Path and query the request was sent to. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, as text. */
  raw: string;
  body: any;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** The status answered while up (default 200). */
  status: number;
  /** Stops listening: deliveries fail with a connection error. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<WebhookReceiver> {
  let server: Server | null = null;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    status: 200,
    down: async () => {
      const closing = server;
      server = null;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    up: async () => {
      const next = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          receiver.received.push({ url: request.url ?? '', headers: request.headers, raw, body: JSON.parse(raw) });
          response.writeHead(receiver.status).end();
        });
      });
      await new Promise<void>((resolve, reject) => {
        next.once('error', reject);
        next.listen(port, '127.0.0.1', () => resolve());
      });
      port = (next.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${port}/hook`;
      server = next;
    },
    close: () => receiver.down(),
  };
  await receiver.up();
  return receiver;
}
