/** Wire formatting shared by machines, views and the runtime: timestamps and clipped display text. */

/** Epoch ms as the protocol's ISO 8601 timestamp (UTC, milliseconds, `Z`); absent stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A display copy clipped to `max` characters with a trailing `…`. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
