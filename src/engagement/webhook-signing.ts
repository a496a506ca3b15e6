/**
 * Webhook secrets and signatures (docs/architecture.md, Webhooks). Every delivery carries one
 * `Webhook-Signature` header: the protocol's own `t=<unix s>,v1=<hex HMAC-SHA256>` over
 * `"<t>.<raw body>"`; when the operator turns on WEBHOOK_STANDARD_SIGNATURE, followed after a space by
 * the Standard Webhooks `v1,<base64 HMAC-SHA256>` over `"<webhook-id>.<t>.<raw body>"`.
 *
 * Both are keyed with the UTF-8 bytes of the whole `whsec_…` string, and `Webhook-Id` /
 * `Webhook-Timestamp` already have the meaning Standard Webhooks gives them. HTTP header names are
 * case-insensitive, so the two schemes cannot have a header each: Standard Webhooks defines the
 * signature header as a space-delimited list whose verifiers skip entries of other versions, which is
 * what lets the protocol's entry lead. A Standard Webhooks receiver verifies with the secret as raw
 * bytes (`new Webhook(secret, { format: 'raw' })`), or with `whsec_` + base64 of the whole secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How old a Webhook-Timestamp a receiver accepts. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmac(secret: string, signed: string): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(signed, 'utf8').digest();
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return hmac(secret, `${timestamp}.${body}`).toString('hex');
}

/** The protocol's own signature: `t=<unix s>,v1=<hex>`. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/** The Standard Webhooks signature entry: `v1,<base64>` over `"<id>.<t>.<body>"`. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${hmac(secret, `${id}.${timestamp}.${body}`).toString('base64')}`;
}

/**
 * The signing headers of one delivery attempt. By default exactly the protocol's header, which
 * receivers in the wild parse as `t=…,v1=…` and nothing more; with `standard` (the operator's
 * WEBHOOK_STANDARD_SIGNATURE) the Standard Webhooks entry follows it in the same header.
 */
export function deliveryHeaders(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
  standard = false,
): Record<string, string> {
  const protocol = signatureHeader(secret, timestamp, body);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standard ? `${protocol} ${standardSignature(secret, id, timestamp, body)}` : protocol,
  };
}

/**
 * What a receiver of the protocol's signature does: take the `t=…,v1=…` entry of the header, compare
 * in constant time, and refuse timestamps older than the tolerance.
 */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number): boolean {
  const entry = header.split(' ').find((candidate) => candidate.startsWith('t='));
  if (entry === undefined) return false;
  const parts = new Map(
    entry.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(timestamp) || given === undefined) return false;
  if (nowSeconds - timestamp > SIGNATURE_TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
