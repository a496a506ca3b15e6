/**
 * Webhook targets (docs/agents.md, The REST loop): the URL rules, and the service's address guard (auth/address-guard.ts)
 * applied to every address the host resolves to, unless the operator allows private targets. The
 * address that passed is the one connected to, so a second DNS answer cannot redirect the request.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isForbiddenAddress } from '../auth/address-guard.js';

const MAX_URL_LENGTH = 2048;

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

export class WebhookTargetRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetRejected';
  }
}

/** The URL rules that need no DNS: absolute http(s), at most 2048 characters, no userinfo. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH)
    throw new WebhookTargetRejected(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetRejected('the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebhookTargetRejected('the URL must use http or https');
  }
  if (url.username !== '' || url.password !== '') throw new WebhookTargetRejected('the URL must not carry userinfo');
  return url;
}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Resolves the URL's host once and checks every address it resolves to; returns the one to connect to. */
export async function resolveTarget(
  url: URL,
  allowPrivate: boolean,
  lookup: Lookup = systemLookup,
): Promise<ResolvedTarget> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host);
    } catch {
      throw new WebhookTargetRejected(`the host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new WebhookTargetRejected(`the host ${host} does not resolve`);
  if (!allowPrivate && addresses.some((a) => isForbiddenAddress(a.address))) {
    throw new WebhookTargetRejected(`the host ${host} is or resolves to a private, loopback or reserved address`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
