/**
 * Ballots on the wire (docs/mechanisms.md): resolve option references, check the shape for
 * the decision's mechanism, and build the canonical ballot stored, counted and signed.
 * Every refusal teaches the caller the right shape for this mechanism.
 */
import canonicalize from 'canonicalize';
import { invalidInput, type ProtocolError, protocolError } from '../errors.js';
import { type CanonicalBallot, type MechanismName, takesSingleChoice } from '../mechanisms/index.js';

export interface ParsedBallot {
  ballot: CanonicalBallot;
  /** 1, or the total credits spent for quadratic ballots (bounded by a mandate's weight_cap). */
  weight: number;
}

export interface BallotContext {
  slug: string;
  proposalsOpen: boolean;
}

const MAX_SCORE = 5;
const CREDITS_PER_VOTER = 9;

// ---------------------------------------------------------------------------------------------
// Wording of the agent view's rules.how_to_choose (docs/agents.md, The REST loop)

const HOW_TO_CHOOSE: Record<MechanismName, string> = {
  simple_majority:
    'choose with a single option: send its number or exact text; an option needs more than half of the choices cast to win.',
  supermajority:
    'choose with a single option: send its number or exact text; an option needs at least two thirds of the choices cast to win.',
  plurality: 'choose with a single option: send its number or exact text; the most-chosen option wins.',
  approval: 'send an array of every option you approve of (numbers or exact texts); the most-approved option wins.',
  ranked_choice: 'send a ranked array of options, best first, without repeats; counted by instant runoff.',
  ranked_pairwise: 'send a ranked array of options, best first, without repeats; counted head-to-head (beatpath).',
  score_vote:
    'send scores from 0 to 5 as an object mapping each option (number or exact text) to a score; the highest total wins.',
  quadratic_vote:
    'send an object spending at most 9 credits across options (whole numbers); each option counts the square root of its credits.',
};

const AGREEMENT_HOW_TO_CHOOSE =
  'choose with a single option to accept it; the decision passes only when every eligible participant accepts the same option.';

export function howToChoose(mechanism: MechanismName, agreement: boolean): string {
  return agreement ? AGREEMENT_HOW_TO_CHOOSE : HOW_TO_CHOOSE[mechanism];
}

export function isSingleChoice(mechanism: MechanismName, agreement: boolean): boolean {
  return agreement || takesSingleChoice(mechanism);
}

// ---------------------------------------------------------------------------------------------
// Option references (docs/mechanisms.md)

const OPTION_NUMBER = /^#?([1-9][0-9]*)$/;

/** 0-based index of the referenced option, or null. Exact text wins over a number-like string. */
export function resolveOptionRef(options: readonly string[], ref: unknown): number | null {
  if (typeof ref === 'string') {
    const exact = options.indexOf(ref);
    if (exact >= 0) return exact;
    const number = OPTION_NUMBER.exec(ref)?.[1];
    return number === undefined ? null : indexOfNumber(options, Number(number));
  }
  if (typeof ref === 'number' && Number.isInteger(ref)) return indexOfNumber(options, ref);
  return null;
}

function indexOfNumber(options: readonly string[], number: number): number | null {
  return number >= 1 && number <= options.length ? number - 1 : null;
}

/** 1-based option number of a single-choice ballot; null for array and map ballots. */
export function singleChoiceNumber(options: readonly string[], ballot: CanonicalBallot): number | null {
  if (typeof ballot !== 'string') return null;
  const index = options.indexOf(ballot);
  return index >= 0 ? index + 1 : null;
}

/** Receipt and read form: the option text, or the JCS text of an array or map ballot. */
export function ballotText(ballot: CanonicalBallot): string {
  if (typeof ballot === 'string') return ballot;
  return canonicalize(ballot) ?? '';
}

// ---------------------------------------------------------------------------------------------
// Parsing (docs/mechanisms.md)

interface Slate {
  mechanism: MechanismName;
  agreement: boolean;
  options: readonly string[];
  ctx: BallotContext;
}

export function parseBallot(
  mechanism: MechanismName,
  agreement: boolean,
  options: readonly string[],
  raw: unknown,
  ctx: BallotContext,
): ParsedBallot {
  const slate: Slate = { mechanism, agreement, options, ctx };
  if (agreement) return { ballot: parseSingleChoice(slate, raw), weight: 1 };
  switch (mechanism) {
    case 'simple_majority':
    case 'supermajority':
    case 'plurality':
      return { ballot: parseSingleChoice(slate, raw), weight: 1 };
    case 'approval':
      return { ballot: parseApproval(slate, raw), weight: 1 };
    case 'ranked_choice':
    case 'ranked_pairwise':
      return { ballot: parseRanking(slate, raw), weight: 1 };
    case 'score_vote':
      return { ballot: parseScores(slate, raw), weight: 1 };
    case 'quadratic_vote':
      return parseCredits(slate, raw);
  }
}

function parseSingleChoice(slate: Slate, raw: unknown): string {
  if (Array.isArray(raw) || isObject(raw)) {
    throw shapeError(slate, `This decision takes a single option, not ${describe(raw)}.`);
  }
  return optionText(slate, raw);
}

/** References resolving to the same option collapse to the first occurrence. */
function parseApproval(slate: Slate, raw: unknown): string[] {
  const indices = readReferenceList(slate, raw);
  return [...new Set(indices)].map((index) => textAt(slate, index));
}

function parseRanking(slate: Slate, raw: unknown): string[] {
  const indices = readReferenceList(slate, raw);
  const repeated = indices.find((index, position) => indices.indexOf(index) !== position);
  if (repeated !== undefined) {
    throw invalidInput(
      'choice',
      `Option ${repeated + 1} (${quote(textAt(slate, repeated))}) appears more than once in the ranking. ${teaching(slate)}`,
      'duplicate_in_ranking',
    );
  }
  return indices.map((index) => textAt(slate, index));
}

function readReferenceList(slate: Slate, raw: unknown): number[] {
  if (!Array.isArray(raw)) throw shapeError(slate, `This decision takes an array of options, not ${describe(raw)}.`);
  if (raw.length === 0) throw shapeError(slate, 'The array is empty; name at least one option.');
  return raw.map((ref) => optionIndex(slate, ref));
}

function parseScores(slate: Slate, raw: unknown): Record<string, number> {
  const scores = readOptionMap(slate, raw, (value, number) => {
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_SCORE) return value;
    throw shapeError(
      slate,
      `The score for option ${number} must be a number from 0 to ${MAX_SCORE}, not ${describe(value)}.`,
    );
  });
  if (!Object.values(scores).some((score) => score > 0)) {
    throw shapeError(slate, 'Give at least one option a score above 0.');
  }
  return scores;
}

function parseCredits(slate: Slate, raw: unknown): ParsedBallot {
  const credits = readOptionMap(slate, raw, (value, number) => {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
    throw shapeError(
      slate,
      `The credits for option ${number} must be a whole number, 0 or more, not ${describe(value)}.`,
    );
  });
  const total = Object.values(credits).reduce((sum, value) => sum + value, 0);
  if (total < 1 || total > CREDITS_PER_VOTER) {
    throw shapeError(slate, `The credits add up to ${total}; spend between 1 and ${CREDITS_PER_VOTER} in total.`);
  }
  return { ballot: credits, weight: total };
}

/**
 * A map ballot keyed by option text in slate order. (An object still enumerates integer-like
 * texts first; receipts are unaffected because they carry the JCS text.)
 */
function readOptionMap(
  slate: Slate,
  raw: unknown,
  readValue: (value: unknown, optionNumber: number) => number,
): Record<string, number> {
  if (!isObject(raw)) throw shapeError(slate, `This decision takes an object, not ${describe(raw)}.`);
  const byIndex = new Map<number, { key: string; value: number }>();
  for (const [key, value] of Object.entries(raw)) {
    const index = optionIndex(slate, key);
    const earlier = byIndex.get(index);
    if (earlier !== undefined) {
      throw shapeError(
        slate,
        `The keys ${quote(earlier.key)} and ${quote(key)} both name option ${index + 1}; give each option one value.`,
      );
    }
    byIndex.set(index, { key, value: readValue(value, index + 1) });
  }
  const inSlateOrder = [...byIndex.entries()].sort(([a], [b]) => a - b);
  return Object.fromEntries(inSlateOrder.map(([index, { value }]) => [textAt(slate, index), value]));
}

function optionIndex(slate: Slate, ref: unknown): number {
  if (typeof ref !== 'string' && typeof ref !== 'number') {
    throw shapeError(slate, `Options are named by number or exact text, not by ${describe(ref)}.`);
  }
  const index = resolveOptionRef(slate.options, ref);
  if (index === null) throw unknownOption(slate, ref);
  return index;
}

function optionText(slate: Slate, ref: unknown): string {
  return textAt(slate, optionIndex(slate, ref));
}

function textAt(slate: Slate, index: number): string {
  const text = slate.options[index];
  if (text === undefined) throw protocolError('internal.error', `Option index ${index} is off the slate.`);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Errors that teach

function shapeError(slate: Slate, problem: string): ProtocolError {
  return invalidInput('choice', `${problem} ${teaching(slate)}`, 'ballot_shape');
}

function teaching(slate: Slate): string {
  const { mechanism, agreement, ctx } = slate;
  return (
    `How to choose here: ${howToChoose(mechanism, agreement)} ` +
    `Send it with the choose action / POST /api/rooms/${ctx.slug}/choose, for example {"choice": ${example(slate)}}.`
  );
}

function example(slate: Slate): string {
  const several = slate.options.length >= 2;
  if (isSingleChoice(slate.mechanism, slate.agreement)) return '1';
  switch (slate.mechanism) {
    case 'approval':
      return several ? '[1, 2]' : '[1]';
    case 'score_vote':
      return several ? '{"1": 5, "2": 3}' : '{"1": 5}';
    case 'quadratic_vote':
      return several ? '{"1": 4, "2": 1}' : '{"1": 4}';
    default:
      return several ? '[2, 1]' : '[1]';
  }
}

function unknownOption(slate: Slate, ref: string | number): ProtocolError {
  const { options, ctx } = slate;
  const shown = typeof ref === 'string' ? quote(ref) : String(ref);
  const listing =
    options.length === 0
      ? 'This decision has no options yet.'
      : `The options are: ${options.map((text, i) => `${i + 1}. ${quote(text)}`).join('; ')}.`;
  const propose = ctx.proposalsOpen
    ? ` If none of them fits, propose a new option with the propose action / POST /api/rooms/${ctx.slug}/options, then choose it.`
    : '';
  return protocolError(
    'choice.invalid_option',
    `${shown} does not name an option of this decision. ${listing} ` +
      `Refer to an option by its number (1 or "#1") or its exact, case-sensitive text ` +
      `with the choose action / POST /api/rooms/${ctx.slug}/choose.${propose}`,
    { details: { options: options.map((text, i) => ({ number: i + 1, text })) } },
  );
}

const SHOWN_LENGTH = 80;

/** JSON-quoted display copy, clipped so a 500 000-character option cannot flood a message. */
function quote(text: string): string {
  const characters = Array.from(text);
  return JSON.stringify(characters.length > SHOWN_LENGTH ? `${characters.slice(0, SHOWN_LENGTH).join('')}…` : text);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the text ${quote(value)}`;
  if (value === undefined) return 'nothing';
  return String(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
