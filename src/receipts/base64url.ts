/**
 * Unpadded base64url (docs/receipts.md). Runs in Node and in browsers: the receipt code it serves is shared
 * with the client library. Node's Buffer is used when present (the server signs with it); browsers
 * use btoa/atob.
 */
const ALPHABET = /^[A-Za-z0-9_-]*$/;
const encoder = new TextEncoder();
/** The part of Node's Buffer used here, declared so that browser builds need no Node typings. */
interface NodeBytes {
  buffer: ArrayBufferLike;
  byteOffset: number;
  byteLength: number;
  toString(encoding: 'base64url'): string;
}
interface NodeBufferClass {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): NodeBytes;
  from(text: string, encoding: 'base64url'): NodeBytes;
}
const nodeBuffer = (globalThis as { Buffer?: NodeBufferClass }).Buffer;

export function base64urlEncode(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? encoder.encode(data) : data;
  if (nodeBuffer) return nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Decodes unpadded base64url, accepting only the canonical encoding: decoders silently skip foreign
 * characters and ignore trailing bits, so a segment is accepted only when re-encoding the decoded
 * bytes reproduces it exactly (docs/receipts.md).
 */
export function base64urlDecodeStrict(segment: string): Uint8Array {
  if (!ALPHABET.test(segment) || segment.length % 4 === 1) throw new Error('not unpadded base64url');
  let bytes: Uint8Array;
  if (nodeBuffer) {
    const decoded = nodeBuffer.from(segment, 'base64url');
    bytes = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  } else {
    const padded = segment.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (segment.length % 4)) % 4);
    bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }
  if (base64urlEncode(bytes) !== segment) throw new Error('non-canonical base64url');
  return bytes;
}
