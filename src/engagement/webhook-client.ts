/**
 * One webhook HTTP attempt: POST to the address the guard approved (resolve once, connect to that
 * address; TLS still verifies the URL's host name), 10 s for the whole exchange, no redirects.
 * Connections to the same approved address are kept alive briefly and reused.
 */
import { LRUCache } from 'lru-cache';
import { Agent, request } from 'undici';
import { type Lookup, parseWebhookUrl, type ResolvedTarget, resolveTarget } from './ssrf.js';

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface AttemptResult {
  ok: boolean;
  /** HTTP status, or the reason no status was received. */
  detail: string;
  /** The HTTP status answered; null when none was (connection error, timeout). */
  status: number | null;
  /** The receiver did not answer in time (it held the attempt for the whole timeout). */
  timedOut: boolean;
}

export type WebhookSender = (
  url: string,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
) => Promise<AttemptResult>;

export function createSender(lookup?: Lookup): WebhookSender {
  const agents = new PinnedAgents();
  return async (text, headers, body, allowPrivate) => {
    try {
      const url = parseWebhookUrl(text);
      const target = await resolveTarget(url, allowPrivate, lookup);
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agents.for(url, target),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, detail: `HTTP ${response.statusCode}`, status: response.statusCode, timedOut: false };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { ok: false, detail, status: null, timedOut: isTimeout(error) };
    }
  };
}

/** Connection pools kept at most; the least recently used is closed past it. */
const MAX_AGENTS = 256;
/** An idle kept-alive connection is closed after this long. */
const KEEP_ALIVE_MS = 4_000;

/**
 * One connection pool per (origin, approved address), so consecutive deliveries to a receiver reuse
 * its connections (a fan-out to 1,000 URLs of one receiver is not 1,000 handshakes) while every
 * connection still goes only to the address the guard approved for this very delivery: when the host
 * resolves elsewhere, that is another pool.
 */
class PinnedAgents {
  private readonly agents = new LRUCache<string, Agent>({
    max: MAX_AGENTS,
    // Requests in flight on an evicted pool finish; close() waits for them.
    dispose: (agent) => void agent.close().catch(() => undefined),
  });

  for(url: URL, target: ResolvedTarget): Agent {
    const key = `${url.origin}|${target.address}`;
    const cached = this.agents.get(key);
    if (cached) return cached;
    const agent = new Agent({
      connect: {
        timeout: DELIVERY_TIMEOUT_MS,
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) callback(null, [target]);
          else callback(null, target.address, target.family);
        },
      },
      headersTimeout: DELIVERY_TIMEOUT_MS,
      bodyTimeout: DELIVERY_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
    });
    this.agents.set(key, agent);
    return agent;
  }
}

/** undici's connect, headers and body timeouts, and the whole-exchange abort signal. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && TIMEOUT_CODES.has(code);
}
