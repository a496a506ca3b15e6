/**
 * Webhook secrets and signatures (docs/agents.md, The REST loop): `Webhook-Signature: t=<unix s>,v1=<hex HMAC-SHA256>` over
 * `"<t>.<raw body>"`, keyed with the UTF-8 bytes of the whole `whsec_…` string.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How old a Webhook-Timestamp a receiver accepts. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/** What a receiver does: constant-time comparison, and timestamps older than the tolerance refused. */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number): boolean {
  const parts = new Map(
    header.split(',').map((part) => {
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
