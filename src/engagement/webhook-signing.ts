/**
 * Webhook secrets and signatures (docs/agents.md, Webhooks; docs/architecture.md, Webhooks). Every
 * delivery carries one `Webhook-Signature` header: the protocol's own `t=<unix s>,v1=<hex
 * HMAC-SHA256>` over `"<t>.<raw body>"`, keyed with the UTF-8 bytes of the whole `whsec_…` string.
 * That is all of the header by default, exactly what receivers written to the protocol parse.
 *
 * When the operator turns on WEBHOOK_STANDARD_SIGNATURE, Standard Webhooks entries `v1,<base64
 * HMAC-SHA256>` over `"<webhook-id>.<t>.<raw body>"` follow it, each after a space (Standard Webhooks
 * defines the header as a space-delimited list whose verifiers skip entries of other versions, which
 * is what lets the protocol's entry lead; header names are case-insensitive, so the two schemes
 * cannot have a header each). The first is keyed as Standard Webhooks keys a `whsec_<base64>` secret:
 * with the bytes its text after `whsec_` decodes to, so `new Webhook(secret)` verifies. Secrets are
 * drawn so that this text is base64 as well as base64url (no `-` or `_`). The second is keyed with the
 * secret's raw text, for receivers built as `new Webhook(secret, { format: 'raw' })` before that.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How old a Webhook-Timestamp a receiver accepts. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * `whsec_` + base64url of 32 random bytes, as the protocol says, drawn again until that text has no
 * `-` or `_` (about 1 draw in 4 passes): then it is also the base64 Standard Webhooks libraries
 * decode, and `new Webhook(secret)` works. Rejecting draws keeps the survivors uniform (~254 bits).
 */
export function newSigningSecret(): string {
  for (;;) {
    const text = randomBytes(32).toString('base64url');
    if (!/[-_]/.test(text)) return `whsec_${text}`;
  }
}

/**
 * The key Standard Webhooks derives from a `whsec_…` secret: the bytes of its base64 text. Secrets
 * issued before they were drawn without `-` and `_` decode the same way as base64url.
 */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64url');
}

function hmac(key: string | Buffer, signed: string): Buffer {
  return createHmac('sha256', typeof key === 'string' ? Buffer.from(key, 'utf8') : key)
    .update(signed, 'utf8')
    .digest();
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return hmac(secret, `${timestamp}.${body}`).toString('hex');
}

/** The protocol's own signature: `t=<unix s>,v1=<hex>`. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/**
 * The Standard Webhooks entries, `v1,<base64>` over `"<id>.<t>.<body>"`: keyed with the decoded
 * secret (`new Webhook(secret)`), then with its raw text (`new Webhook(secret, { format: 'raw' })`).
 */
export function standardSignatures(secret: string, id: string, timestamp: number, body: string): string {
  const signed = `${id}.${timestamp}.${body}`;
  return [standardKey(secret), secret].map((key) => `v1,${hmac(key, signed).toString('base64')}`).join(' ');
}

/**
 * The signing headers of one delivery attempt. By default exactly the protocol's header, which
 * receivers in the wild parse as `t=…,v1=…` and nothing more; with `standard` (the operator's
 * WEBHOOK_STANDARD_SIGNATURE) the Standard Webhooks entries follow it in the same header.
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
    'webhook-signature': standard ? `${protocol} ${standardSignatures(secret, id, timestamp, body)}` : protocol,
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
