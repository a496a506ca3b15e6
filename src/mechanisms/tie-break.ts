/**
 * Seeded tie-breaking (docs/mechanisms.md): the only randomness a mechanism has comes from hashing the
 * decision id together with a JCS payload that names the tie.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import canonicalize from 'canonicalize';
import { protocolError } from '../errors.js';
import type { TieBreak, Verdict } from './types.js';

export const NO_PASS_TIE_REASON = 'no_pass tie-break: tie not resolved';

export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw protocolError('internal.error', 'Value cannot be canonicalised as JSON.');
  return text;
}

export interface SeededDraw {
  /** First four digest bytes, big-endian. */
  uint32: number;
  index: number;
}

/** idx = uint32_be(SHA-256(utf8(seed) ‖ utf8(canonical))[0..4]) mod size */
export function seededDraw(seed: string, canonical: string, size: number): SeededDraw {
  const digest = sha256(new TextEncoder().encode(seed + canonical));
  const uint32 = new DataView(digest.buffer, digest.byteOffset, 4).getUint32(0);
  return { uint32, index: uint32 % size };
}

/** Payload hashed for a top tie (generic, Schulze, score, quadratic). */
export function topTieCanonical(options: readonly string[], ties: readonly string[]): string {
  return jcs({ options, ties });
}

/** Payload hashed for an instant-runoff bottom tie; `round` is 0-based, `remaining` in slate order. */
export function bottomTieCanonical(round: number, remaining: readonly string[], tied: readonly string[]): string {
  return jcs({ round, remaining, tied });
}

/** Payload hashed when every instant-runoff ballot is exhausted; `remaining` in JavaScript key order. */
export function exhaustedCanonical(remaining: readonly string[]): string {
  return jcs({ exhausted: true, remaining });
}

/** `list[index]`, for indices that are in range by construction. */
export function pickFrom<T>(list: readonly T[], index: number): T {
  const picked = list[index];
  if (picked === undefined) throw protocolError('internal.error', `Tie-break index ${index} is out of range.`);
  return picked;
}

/** The option a tie rule picks from a top tie, or null under `no_pass`. */
export function breakTopTie(
  rule: TieBreak,
  ties: readonly string[],
  options: readonly string[],
  seed: string,
): string | null {
  switch (rule) {
    case 'no_pass':
      return null;
    case 'first_listed':
      return pickFrom(
        options.filter((option) => ties.includes(option)),
        0,
      );
    case 'random_seeded':
      return pickFrom(ties, seededDraw(seed, topTieCanonical(options, ties), ties.length).index);
  }
}

/**
 * Verdict over the top-scored options: a single leader passes; a tie goes to the tie rule, and
 * `describe` words the reason when the rule picked a winner.
 */
export function resolveTopTie(
  ties: readonly string[],
  rule: TieBreak,
  options: readonly string[],
  seed: string,
  describe: (winner: string, size: number) => string,
): Verdict {
  if (ties.length === 1) return { outcome: 'pass', winner: pickFrom(ties, 0) };
  const winner = breakTopTie(rule, ties, options, seed);
  if (winner === null) return { outcome: 'tied', winner: null, reason: NO_PASS_TIE_REASON };
  return { outcome: 'pass', winner, reason: describe(winner, ties.length) };
}
