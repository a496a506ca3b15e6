/**
 * Requests from a chosen loopback source address: the whole of 127.0.0.0/8 is loopback on Linux,
 * so binding a client socket's local address to 127.0.0.N makes it a different client to nginx,
 * with no header to trust. Each request has a socket of its own (no agent), so nothing is shared.
 */
import { request } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export function requestFrom(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        localAddress,
        agent: false,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer from ${url} within 60 s`)));
    req.end(payload);
  });
}

/** An open event stream (or its refusal): the status, and a way to hang up. */
export interface HeldStream {
  status: number;
  close(): void;
}

/** Opens an SSE stream from `localAddress`; resolves once the status line is in (the body stays open). */
export function openStreamFrom(localAddress: string, url: string): Promise<HeldStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      req.setTimeout(0);
      res.resume();
      res.on('error', () => undefined);
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`no status from ${url} within 30 s`)));
    req.end();
  });
}
