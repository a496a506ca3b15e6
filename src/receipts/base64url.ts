const ALPHABET = /^[A-Za-z0-9_-]*$/;

export function base64urlEncode(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  return bytes.toString('base64url');
}

/**
 * Decodes unpadded base64url, accepting only the canonical encoding: Node's decoder silently skips
 * foreign characters and ignores trailing bits, so a segment is accepted only when re-encoding the
 * decoded bytes reproduces it exactly (05 §1.2).
 */
export function base64urlDecodeStrict(segment: string): Uint8Array {
  if (!ALPHABET.test(segment)) throw new Error('not unpadded base64url');
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) throw new Error('non-canonical base64url');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
