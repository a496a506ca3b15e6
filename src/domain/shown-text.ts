/**
 * What other agents are shown: the rules for every text one party writes and the others read
 * (display names, invite labels, questions, options, `about`, context, message bodies, close
 * statements, reasons). Agents read these texts inside their own prompts, so a text must say what it
 * shows (docs/architecture.md, What others are shown):
 *
 * - No control characters (C0, DEL, C1) and no line or paragraph separators (U+2028, U+2029): a
 *   line break in a name or an option lets its author start a line of their own in everyone's
 *   context ("x\nSYSTEM: …"). Free text (`paragraphs`) may hold line feeds and tabs, nothing else.
 * - No bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C): they make a text
 *   display in another order than it is stored, so a signed winner could read as another option.
 * - No other invisible formatting: the Unicode default-ignorable code points (zero-width spaces,
 *   U+2060–U+2064, U+FEFF, the soft hyphen, U+180E, Hangul fillers, tag characters that can smuggle
 *   hidden ASCII) and the interlinear annotation marks (U+FFF9–U+FFFB). Kept, because real text needs
 *   them: ZWNJ/ZWJ (U+200C, U+200D: Persian and Indic scripts, emoji sequences) and the variation
 *   selectors (emoji presentation, CJK and Mongolian variants).
 * - Seat names must be visible and may not claim a role the service itself shows (`operator` is
 *   what administrator acts are attributed to).
 *
 * Texts are refused, never rewritten: what is stored stays byte-exact. Two options a reader could
 * not tell apart are refused as look-alikes: they compare by `optionLikeness` (NFKC, default-ignorables
 * removed, spaces trimmed and collapsed, then the UTS #39 confusable skeleton; case kept), so
 * "ﬁsh"/"fish", "Yes "/"Yes" and Cyrillic "Yеs"/"Yes" are one option while "Nd5"/"nd5" stay two.
 * Seat names compare the same way and also case-insensitively (`seatNameLikeness`). Stored rooms are
 * not re-checked when loaded: text accepted by earlier versions stays readable and choosable.
 */
import { invalidInput, type ProtocolError } from '../errors.js';
import { clip } from './format.js';
import { skeleton } from './skeleton.js';

/**
 * - `line`: one line others read (a question, an option).
 * - `paragraphs`: free text; line feeds and tabs allowed.
 * - `seat_name`: a seat's display name or an invite label: one line, not blank, not reserved.
 * - `creator_name`: the creator's display name: a seat name that may be "creator" (its default).
 */
export type ShownTextKind = 'line' | 'paragraphs' | 'seat_name' | 'creator_name';

/** Names the service itself shows for roles, compared after `nameIdentity`. */
export const RESERVED_NAMES: readonly string[] = [
  'operator',
  'creator',
  'system',
  'admin',
  'administrator',
  'moderator',
  'conclave',
  'service',
  'root',
];

const SUSPECT = /[\p{Cc}\p{Default_Ignorable_Code_Point}\u2028\u2029\uFFF9-\uFFFB]/gu;
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const NON_ASCII = /[^\p{ASCII}]/u;
const BIDI = new Set([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

/** Default-ignorable code points real text needs: joiners and variation selectors. */
function keptInvisible(cp: number): boolean {
  return (
    cp === 0x200c ||
    cp === 0x200d ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0100 && cp <= 0xe01ef) ||
    (cp >= 0x180b && cp <= 0x180d) ||
    cp === 0x180f
  );
}

const NAMES: Record<string, string> = {
  'U+0000': 'NULL',
  'U+0009': 'CHARACTER TABULATION',
  'U+000A': 'LINE FEED',
  'U+000B': 'LINE TABULATION',
  'U+000C': 'FORM FEED',
  'U+000D': 'CARRIAGE RETURN',
  'U+001B': 'ESCAPE',
  'U+007F': 'DELETE',
  'U+0085': 'NEXT LINE',
  'U+00AD': 'SOFT HYPHEN',
  'U+034F': 'COMBINING GRAPHEME JOINER',
  'U+061C': 'ARABIC LETTER MARK',
  'U+115F': 'HANGUL CHOSEONG FILLER',
  'U+1160': 'HANGUL JUNGSEONG FILLER',
  'U+180E': 'MONGOLIAN VOWEL SEPARATOR',
  'U+200B': 'ZERO WIDTH SPACE',
  'U+200E': 'LEFT-TO-RIGHT MARK',
  'U+200F': 'RIGHT-TO-LEFT MARK',
  'U+2028': 'LINE SEPARATOR',
  'U+2029': 'PARAGRAPH SEPARATOR',
  'U+202A': 'LEFT-TO-RIGHT EMBEDDING',
  'U+202B': 'RIGHT-TO-LEFT EMBEDDING',
  'U+202C': 'POP DIRECTIONAL FORMATTING',
  'U+202D': 'LEFT-TO-RIGHT OVERRIDE',
  'U+202E': 'RIGHT-TO-LEFT OVERRIDE',
  'U+2060': 'WORD JOINER',
  'U+2061': 'FUNCTION APPLICATION',
  'U+2062': 'INVISIBLE TIMES',
  'U+2063': 'INVISIBLE SEPARATOR',
  'U+2064': 'INVISIBLE PLUS',
  'U+2066': 'LEFT-TO-RIGHT ISOLATE',
  'U+2067': 'RIGHT-TO-LEFT ISOLATE',
  'U+2068': 'FIRST STRONG ISOLATE',
  'U+2069': 'POP DIRECTIONAL ISOLATE',
  'U+3164': 'HANGUL FILLER',
  'U+FEFF': 'ZERO WIDTH NO-BREAK SPACE',
  'U+FFA0': 'HALFWIDTH HANGUL FILLER',
};

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

function why(cp: number, kind: ShownTextKind): string {
  if (BIDI.has(cp)) {
    return 'That is a bidi control: it makes the text display in another order than it is stored, so others would read something other than what was sent';
  }
  if (cp === 0x0a || cp === 0x0d || cp === 0x85 || cp === 0x2028 || cp === 0x2029) {
    return kind === 'paragraphs'
      ? 'Break lines with a line feed (\\n) only'
      : 'This field is one line: a line break would let the text start a line of its own in what others read';
  }
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
    return kind === 'paragraphs'
      ? 'That is a control character; only line feeds (\\n) and tabs (\\t) may appear in this text'
      : 'That is a control character; this field takes one line of visible characters';
  }
  if (cp >= 0xe0000 && cp <= 0xe007f) return 'Tag characters are invisible and can hide text from human readers';
  return 'It is invisible, so the text would look like another text';
}

export interface TextProblem {
  /** "contains U+202E RIGHT-TO-LEFT OVERRIDE at position 3. …", completing "The field "x" …". */
  message: string;
}

/** The first reason `text` may not be shown as a `kind`, or null. Position counts characters from 1. */
export function shownTextProblem(text: string, kind: ShownTextKind): TextProblem | null {
  for (const match of text.matchAll(SUSPECT)) {
    const cp = match[0].codePointAt(0)!;
    if (kind === 'paragraphs' && (cp === 0x0a || cp === 0x09)) continue;
    // A CRLF line end is a line break like any other; a lone CR can overwrite a line on a terminal.
    if (kind === 'paragraphs' && cp === 0x0d && text[match.index + 1] === '\n') continue;
    if (keptInvisible(cp)) continue;
    const position = [...text.slice(0, match.index)].length + 1;
    const name = NAMES[hex(cp)] ? ` ${NAMES[hex(cp)]}` : '';
    return { message: `contains ${hex(cp)}${name} at position ${position}. ${why(cp, kind)}. Remove it` };
  }
  if (kind !== 'seat_name' && kind !== 'creator_name') return null;
  if (textIdentity(text).trim() === '') {
    return { message: 'is blank: a seat name must show at least one visible character' };
  }
  const reserved = reservedName(text);
  if (reserved !== null && !(kind === 'creator_name' && reserved === 'creator' && nameIdentity(text) === 'creator')) {
    return {
      message: `is reserved: "${reserved}" names a role the service itself shows (the room's creator and operator, the service and its administrators), so others would take this seat for it. Choose another name`,
    };
  }
  return null;
}

/** The comparison form of a shown text: NFKC, without default-ignorable code points; case kept. */
export function textIdentity(text: string): string {
  // ASCII is its own NFKC form and holds no default-ignorable: most options skip the normalizer.
  if (!NON_ASCII.test(text)) return text;
  return text.replace(DEFAULT_IGNORABLE, '').normalize('NFKC').replace(DEFAULT_IGNORABLE, '');
}

/** The comparison form of a seat name: `textIdentity`, lower-cased, inner whitespace collapsed. */
export function nameIdentity(text: string): string {
  return textIdentity(text).toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * The reserved name `text` claims, or null. Surrounding punctuation and the " (2)" suffix the
 * service gives repeated names are ignored: "[System]" and "operator (2)" claim a role too.
 */
export function reservedName(text: string): string | null {
  const bare = nameIdentity(text)
    .replace(/\s*\(\d+\)$/u, '')
    .replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '');
  if (RESERVED_NAMES.includes(bare)) return bare;
  // "оperator" with a Cyrillic о claims the role as well as the Latin spelling does.
  const shape = skeleton(bare);
  return RESERVED_NAMES.find((name) => RESERVED_SHAPES.get(name) === shape) ?? null;
}

const RESERVED_SHAPES = new Map(RESERVED_NAMES.map((name) => [name, skeleton(name)]));

const collapseSpaces = (text: string) => text.replace(/\s+/gu, ' ').trim();

/**
 * The comparison form of an option: `textIdentity`, spaces at the ends dropped and runs of spaces
 * collapsed, then the UTS #39 skeleton (domain/skeleton.ts). Equal forms read the same; case is kept.
 */
export function optionLikeness(text: string): string {
  return collapseSpaces(skeleton(collapseSpaces(textIdentity(text))));
}

/**
 * The comparison forms of a seat name: `nameIdentity` (what the protocol's repeated-name rule
 * compares: equal identities are the same name, given a visible " (2)"), and the shapes a reader
 * sees — the skeleton as written (so "aIice" with a capital I is "alice") and the skeleton of the
 * lower-cased identity (so "Аlice" with a Cyrillic capital А is "alice" too).
 */
export interface SeatNameLikeness {
  identity: string;
  shapes: readonly [string, string];
}

export function seatNameLikeness(text: string): SeatNameLikeness {
  const identity = nameIdentity(text);
  return { identity, shapes: [optionLikeness(text), collapseSpaces(skeleton(identity))] };
}

/** Whether two seat names look alike to a reader without being the same name (by `nameIdentity`). */
export function namesLookAlike(a: SeatNameLikeness, b: SeatNameLikeness): boolean {
  if (a.identity === b.identity) return false;
  return a.shapes[0] === b.shapes[0] || a.shapes[1] === b.shapes[1];
}

/**
 * How two look-alike texts differ, for a refusal's message: the first character that differs
 * (with its code point, so an invisible or foreign letter can be found), or that only spaces do.
 */
export function howTheyDiffer(existing: string, offered: string): string {
  if (collapseSpaces(existing) === collapseSpaces(offered)) {
    return 'they differ only in spaces at the ends or between words';
  }
  const a = [...existing];
  const b = [...offered];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    const cp = (char: string | undefined) => (char === undefined ? 'nothing' : hex(char.codePointAt(0)!));
    return `at character ${i + 1} one has ${cp(b[i])} where the other has ${cp(a[i])}`;
  }
  return 'they are the same text';
}

/** The first pair of options that read the same (exact or by `optionLikeness`), 0-based, or null. */
function lookalikeOptions(options: readonly string[]): [number, number] | null {
  const seen = new Map<string, number>();
  for (const [index, option] of options.entries()) {
    const key = optionLikeness(option);
    const first = seen.get(key);
    if (first !== undefined) return [first, index];
    seen.set(key, index);
  }
  return null;
}

/** input.invalid when two options of a slate read the same; `route` names the act for the message. */
export function duplicateOptions(options: readonly string[], route: string): ProtocolError | null {
  const pair = lookalikeOptions(options);
  if (pair === null) return null;
  const [first, second] = pair;
  const a = options[first]!;
  const b = options[second]!;
  if (a === b) {
    return invalidInput(
      'options',
      `Option "${clip(a, 80)}" is listed twice; options must be unique (${route}).`,
      'invalid_value',
    );
  }
  return invalidInput(
    'options',
    `Options ${first + 1} ("${clip(a, 80)}") and ${second + 1} ("${clip(b, 80)}") read the same: ${howTheyDiffer(a, b)}. ${LOOKALIKE_RULE} so a ballot or receipt naming one would look like the other. Keep one of them; options that differ only in case stay distinct (${route}).`,
    'lookalike',
    { like_option: first + 1 },
  );
}

/** What look-alike refusals say is set aside when texts are compared. */
export const LOOKALIKE_RULE =
  'Texts are compared as a reader sees them: spaces at the ends and between words, Unicode compatibility forms (NFKC), invisible characters and look-alike letters of other scripts (Unicode confusables, UTS #39) are set aside,';

/** The existing option a proposal reads the same as (by `optionLikeness`), 0-based, or null. */
export function lookalikeOf(options: readonly string[], proposal: string): number | null {
  const key = optionLikeness(proposal);
  const index = options.findIndex((option) => optionLikeness(option) === key);
  return index >= 0 ? index : null;
}
