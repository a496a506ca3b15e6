/**
 * The confusable skeleton of a text (Unicode UTS #39, Confusable Detection): two texts a reader
 * cannot tell apart — Latin "a" and Cyrillic "а", "I" and "l", "0" and "O" — have the same
 * skeleton. A skeleton is a comparison key only, never shown and never stored: it is a hodgepodge of
 * scripts ("m" becomes "rn"). docs/architecture.md, What others are shown, says where it is used.
 *
 * The mapping from each character to its prototype is Unicode's confusables.txt as the
 * `unhomoglyph` package carries it (one code point to its prototype string). The skeleton follows
 * the standard's steps: NFD, default-ignorable code points removed, each character replaced by its
 * prototype, NFD again. The mapping keeps case apart except where the glyphs themselves are alike
 * ("I" → "l"), so "Nd5" and "nd5" keep different skeletons.
 */
import { createRequire } from 'node:module';

const prototypes = new Map<string, string>(
  Object.entries(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>),
);

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/** The UTS #39 skeleton of `text`. */
export function skeleton(text: string): string {
  const decomposed = text.normalize('NFD').replace(DEFAULT_IGNORABLE, '');
  let mapped = '';
  for (const char of decomposed) mapped += prototypes.get(char) ?? char;
  return mapped.normalize('NFD');
}
