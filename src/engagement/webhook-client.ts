/**
 * One webhook HTTP attempt: POST to the address the guard approved (resolve once, connect to that
 * address; TLS still verifies the URL's host name), 10 s for the whole exchange, no redirects.
 */
import { Agent, request } from 'undici';
import { type Lookup, parseWebhookUrl, resolveTarget } from './ssrf.js';

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface AttemptResult {
  ok: boolean;
  /** HTTP status, or the reason no status was received. */
  detail: string;
}

export type WebhookSender = (
  url: string,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
) => Promise<AttemptResult>;

export function createSender(lookup?: Lookup): WebhookSender {
  return async (text, headers, body, allowPrivate) => {
    let agent: Agent | undefined;
    try {
      const url = parseWebhookUrl(text);
      const target = await resolveTarget(url, allowPrivate, lookup);
      agent = new Agent({
        connect: {
          timeout: DELIVERY_TIMEOUT_MS,
          lookup: (_hostname, options, callback) => {
            if ((options as { all?: boolean }).all) callback(null, [target]);
            else callback(null, target.address, target.family);
          },
        },
        headersTimeout: DELIVERY_TIMEOUT_MS,
        bodyTimeout: DELIVERY_TIMEOUT_MS,
      });
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, detail: `HTTP ${response.statusCode}` };
    } catch (error) {
      return { ok: false, detail: error instanceof Error ? error.message : String(error) };
    } finally {
      void agent?.destroy().catch(() => undefined);
    }
  };
}
