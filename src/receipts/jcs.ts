import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) text of a JSON value (docs/receipts.md).
 *
 * The `canonicalize` package already rejects NaN, infinities and lone surrogates, maps -0 to 0 and
 * sorts keys by UTF-16 code units. It does not reject values JSON cannot represent (it would emit
 * `"k":undefined` for a function member, for example), so those are refused here first: signed bytes
 * must never depend on a silent coercion. Object members whose value is `undefined` are omitted, as
 * `JSON.stringify` does; `undefined` anywhere else is an error.
 */
export function canonicalJson(value: unknown): string {
  assertJsonRepresentable(value, '$', new Set());
  const text = canonicalize(value);
  if (text === undefined) throw new Error('JCS: value has no JSON representation');
  return text;
}

/** SHA-256 in hex; pure JS so that receipt hashing runs unchanged in the browser client. */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(sha256(typeof data === 'string' ? new TextEncoder().encode(data) : data));
}

function assertJsonRepresentable(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'number':
      return; // strings and numbers are checked by canonicalize itself
    case 'undefined':
      throw new Error(`JCS: undefined at ${path}`);
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new Error(`JCS: ${typeof value} at ${path} is not a JSON value`);
  }
  if (value === null) return;
  const obj = value as object;
  if (seen.has(obj)) throw new Error(`JCS: circular reference at ${path}`);
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    seen.add(obj);
    assertJsonRepresentable(toJSON.call(obj), path, seen);
    seen.delete(obj);
    return;
  }
  seen.add(obj);
  if (Array.isArray(obj)) {
    // Indexed loop rather than forEach so that holes in sparse arrays are seen (and refused).
    for (let i = 0; i < obj.length; i++) assertJsonRepresentable(obj[i], `${path}[${i}]`, seen);
  } else {
    for (const [key, member] of Object.entries(obj)) {
      if (member !== undefined) assertJsonRepresentable(member, `${path}.${key}`, seen);
    }
  }
  seen.delete(obj);
}
