/**
 * RoomConfig: defaults, the mutable subset, and validation with the protocol's reasons
 * (docs/configuration.md). One validator serves creation and settings patches.
 */
import { z } from 'zod';
import { invalidInput, type ProtocolError } from '../errors.js';
import { RESERVED_MECHANISMS, WIRED_MECHANISMS } from '../mechanisms/index.js';
import type { AuthorityConfig, RoomConfig } from './types.js';
import { unknownKeysError } from './unknown-keys.js';

export const DEFAULT_ROOM_CONFIG: RoomConfig = {
  type: 'ephemeral',
  visibility: 'unlisted',
  mechanism: 'simple_majority',
  invite_authority: { kind: 'operator' },
  option_proposal_authority: { kind: 'any_participant' },
  decision_opening_authority: { kind: 'any_participant' },
  conclusion_authority: { kind: 'operator' },
  auth: 'either',
  quorum: null,
  voting_window: 3600,
  deliberation_mode: 'optional',
  max_participants: null,
  max_options: 100,
  max_deliberation_messages_per_participant: 200,
  max_total_deliberation_messages: 500,
  read_receipts: false,
  choice_visibility: 'live',
  early_close: false,
  settle_window: 45,
  creator_votes: true,
  max_open_decisions: 1,
};

/**
 * How much text a room can be given, in characters (UTF-16 code units, as JSON strings count them).
 * The per-field maxima are the protocol's; the total option text of one decision is this service's
 * own bound (the protocol bounds each option, not their sum), so that the largest room a client can
 * create stays small beside the room cache and the disk (docs/architecture.md, Memory and disk): one
 * option of the protocol's full length fits, or any number of shorter ones up to the same total.
 */
export const TEXT_LIMITS = {
  question: 500,
  about: 100_000,
  context: 100_000,
  option: 500_000,
  optionsPerDecision: 500_000,
} as const;

/** The characters of a slate's option texts together. */
export function optionChars(options: readonly string[]): number {
  let total = 0;
  for (const option of options) total += option.length;
  return total;
}

/** 400 when a decision's options would hold more text than TEXT_LIMITS.optionsPerDecision; else null. */
export function slateTextError(options: readonly string[], field: string, route: string): ProtocolError | null {
  const total = optionChars(options);
  if (total <= TEXT_LIMITS.optionsPerDecision) return null;
  return invalidInput(
    field,
    `The options of one decision may hold ${TEXT_LIMITS.optionsPerDecision} characters together; these would hold ${total}. Shorten the options, or link to long texts instead of pasting them (${route}).`,
    'out_of_range',
    { limit: TEXT_LIMITS.optionsPerDecision, total },
  );
}

export const CONFIG_KEYS = Object.keys(DEFAULT_ROOM_CONFIG) as (keyof RoomConfig)[];
export const IMMUTABLE_KEYS: readonly (keyof RoomConfig)[] = ['type', 'visibility', 'mechanism'];
export const MUTABLE_KEYS = CONFIG_KEYS.filter((k) => !IMMUTABLE_KEYS.includes(k));

const int = (min: number, max?: number) => {
  const base = z.number().int().min(min);
  return max === undefined ? base : base.max(max);
};

export const authorityConfigSchema = z
  .strictObject({
    kind: z
      .enum(['none', 'operator', 'designated', 'any_participant'])
      .describe(
        'Who holds the authority: none (nobody, not even the creator), operator (holders of an operator credential: the creator token or an admin token), designated (only the listed participant_ids; the operator is not implied), any_participant (every member with the participant role, plus operator credentials). Observers never qualify.',
      ),
    participant_ids: z
      .array(z.string().min(1).max(200))
      .max(1000)
      .optional()
      .describe(
        'The participant ids holding the authority; required and non-empty when kind is designated, ignored otherwise.',
      ),
  })
  .meta({ id: 'AuthorityConfig', description: 'Who may perform one class of room act.' });

const seconds = (text: string) => `${text} In seconds.`;

/** Every key of a room's config, each required: the resolved config every read returns. */
const roomConfigShape = z.strictObject({
  type: z
    .enum(['ephemeral', 'persistent'])
    .describe(
      'ephemeral rooms are made for one decision: once one has sealed, reads stop offering ask (more.ask), though an explicit authorized ask still opens another; persistent rooms offer ask until closed. Receipts mark decisions ephemeral or standing accordingly. Fixed at creation.',
    ),
  visibility: z
    .enum(['public', 'unlisted', 'private'])
    .describe(
      'No room is listed anywhere: people find a room by its slug or URL. public rooms are readable by anyone with the slug, without joining; unlisted rooms can be joined by anyone with the slug, and only members read them (others get room.join_required); private rooms need an invite or the room password to join, and a seat or the password to read. A room created with a password defaults to private. Fixed at creation.',
    ),
  mechanism: z
    .enum(WIRED_MECHANISMS as unknown as [string, ...string[]])
    .describe(
      'How ballots are counted, and so the shape of a choice: simple_majority, supermajority and plurality take one option; approval, ranked_choice and ranked_pairwise take an array of options; score_vote and quadratic_vote take an object mapping options to numbers. Reserved mechanisms (budget_allocation, conviction_vote, bilateral_negotiation) are refused. Fixed at creation.',
    ),
  invite_authority: authorityConfigSchema.describe('Who may create, list and revoke invites.'),
  option_proposal_authority: authorityConfigSchema.describe(
    'Who may propose options. kind none also closes proposals on every decision.',
  ),
  decision_opening_authority: authorityConfigSchema.describe('Who may open decisions (ask) and start choosing.'),
  conclusion_authority: authorityConfigSchema.describe('Who may close the room.'),
  auth: z
    .enum(['token_only', 'mandate_required', 'either'])
    .describe(
      'Which seat credentials the room accepts: token_only (participant tokens; mandates are refused), mandate_required (every seat act needs a signed mandate; joining without one is refused), either. Operator credentials are accepted for operator acts whatever this says.',
    ),
  quorum: int(1, 1_000_000)
    .nullable()
    .describe(
      'Responses (choices plus abstentions) a decision needs to resolve with a winner, and also the floor of its electorate size when counting; null means no quorum. A decision whose window closes below quorum resolves without a winner.',
    ),
  voting_window: int(60, 1_209_600).describe(
    seconds(
      'How long a decision accepts choices once choosing opens (60 to 1 209 600, i.e. one minute to 14 days). A change applies to decisions opened afterwards.',
    ),
  ),
  deliberation_mode: z
    .enum(['optional', 'disabled'])
    .describe('optional lets members post discussion messages; disabled refuses discuss.'),
  max_participants: int(1, 1_000_000)
    .nullable()
    .describe(
      'Most seats the room holds (creator and observers included); further joins are refused with room.at_capacity. null means no limit. A capacity ceiling, not an access control.',
    ),
  max_options: int(2, 500).describe('Most options one decision may hold, counting proposals (2 to 500).'),
  max_deliberation_messages_per_participant: int(1, 500).describe(
    'Most discussion messages one member may post per decision (room-scoped messages: per rolling 24 hours), 1 to 500.',
  ),
  max_total_deliberation_messages: int(1, 5000).describe(
    'Most discussion messages all members together may post per decision (room-scoped messages: per rolling 24 hours), 1 to 5000.',
  ),
  read_receipts: z
    .boolean()
    .describe("When true, the full room state shows each member's last_seen_at; when false it is always null."),
  choice_visibility: z
    .enum(['live', 'after_decided', 'never'])
    .describe(
      'When individual choices are shown to members: live (as they are cast), after_decided (once the decision seals), never (only totals and the outcome). Hidden choices are redacted from events too.',
    ),
  early_close: z
    .boolean()
    .describe(
      'When true, a decision seals as soon as its outcome can no longer change (after settle_window); when false it runs to the end of voting_window.',
    ),
  settle_window: int(0, 3600).describe(
    seconds(
      'With early_close, how long a determined outcome settles before it seals (0 to 3600; 0 seals at once). Late acts still count; one that changes the winner restarts the window, at most 4 times. Without early_close it has no effect.',
    ),
  ),
  creator_votes: z
    .boolean()
    .describe(
      'false makes the creator a non-voting host: its seat does not count in the electorate and cannot choose.',
    ),
  max_open_decisions: int(1, 5).describe(
    'How many decisions may be open at once (1 to 5); ask is refused with decision.already_open beyond it. Acts without a decision number target the oldest open one.',
  ),
});

/**
 * The resolved room config, as reads (create, full state, settings, discovery) return it: every key
 * present, the ones never set holding their defaults.
 */
export const resolvedRoomConfigSchema = roomConfigShape.meta({
  id: 'RoomConfig',
  description: 'The resolved room settings: every key present, those never set holding their defaults.',
});

/** Every key optional: the shape accepted at creation; the resolved config has them all. */
export const roomConfigSchema = roomConfigShape.partial().meta({
  id: 'RoomConfigInput',
  description:
    'Room settings. Every key is optional when creating (the rest take the defaults) and when changing settings (type, visibility and mechanism cannot change); reads return every key resolved. Unknown keys are refused with input.invalid.',
});

/**
 * A settings patch: the mutable keys, each optional (IMMUTABLE_KEYS are fixed at creation; the
 * handler refuses them with reason immutable_key, applySettings below).
 */
export const roomSettingsPatchSchema = roomConfigShape
  .omit({ type: true, visibility: true, mechanism: true })
  .partial()
  .meta({
    id: 'RoomSettingsPatch',
    description:
      'The room settings to change, each optional; the others keep their values. type, visibility and mechanism are fixed at creation and refused here (input.invalid, reason immutable_key), as are unknown keys.',
  });

/** Turns a zod issue list into the protocol's input.invalid with a reason an agent can act on. */
export function configError(
  error: z.ZodError,
  prefix: string,
  allowed: readonly string[] = CONFIG_KEYS,
): ProtocolError {
  const issue = error.issues[0]!;
  const field = [prefix, ...issue.path.map(String)].join('.');
  switch (issue.code) {
    case 'unrecognized_keys':
      return unknownKeysError(field, issue.keys, allowed, field);
    case 'too_small':
    case 'too_big':
      return invalidInput(field, `${field} is out of range: ${issue.message}.`, 'out_of_range');
    case 'invalid_type':
      return invalidInput(field, `${field} has the wrong type: ${issue.message}.`, 'wrong_type');
    default:
      return invalidInput(field, `${field} is invalid: ${issue.message}.`, 'invalid_value');
  }
}

function checkMechanism(value: unknown, field: string): void {
  if (typeof value !== 'string') return;
  if (RESERVED_MECHANISMS.includes(value)) {
    throw invalidInput(
      field,
      `The mechanism "${value}" is reserved and not implemented by this service. Use one of: ${WIRED_MECHANISMS.join(', ')}.`,
      'reserved_mechanism',
    );
  }
  if (!(WIRED_MECHANISMS as readonly string[]).includes(value)) {
    throw invalidInput(
      field,
      `Unknown mechanism "${value}". Use one of: ${WIRED_MECHANISMS.join(', ')}.`,
      'unknown_mechanism',
    );
  }
}

function checkAuthority(value: AuthorityConfig | undefined, field: string): void {
  if (value?.kind === 'designated' && (!value.participant_ids || value.participant_ids.length === 0)) {
    throw invalidInput(
      `${field}.participant_ids`,
      `${field} of kind "designated" needs a non-empty participant_ids list.`,
      'invalid_value',
    );
  }
}

function checkSpecialKeys(raw: Record<string, unknown>, prefix: string): void {
  if ('recurrence' in raw) {
    throw invalidInput(
      `${prefix}.recurrence`,
      'Recurring rooms are not supported by this service; remove the recurrence key and create a room per occasion.',
      'unknown_keys',
      { allowed_keys: CONFIG_KEYS },
    );
  }
  if (raw.visibility === 'password') {
    throw invalidInput(
      `${prefix}.visibility`,
      'The visibility value "password" was removed. Use visibility "private" and set the top-level password field instead.',
      'invalid_value',
    );
  }
  if ('mechanism' in raw) checkMechanism(raw.mechanism, `${prefix}.mechanism`);
}

/** Validates a partial config object from the wire and returns it typed (not yet merged). */
export function parsePartialConfig(raw: unknown, prefix = 'config'): Partial<RoomConfig> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalidInput(prefix, `${prefix} must be a JSON object.`, 'wrong_type');
  }
  checkSpecialKeys(raw as Record<string, unknown>, prefix);
  const parsed = roomConfigSchema.safeParse(raw);
  if (!parsed.success) throw configError(parsed.error, prefix, prefix === 'settings' ? MUTABLE_KEYS : CONFIG_KEYS);
  const config = parsed.data as Partial<RoomConfig>;
  for (const key of [
    'invite_authority',
    'option_proposal_authority',
    'decision_opening_authority',
    'conclusion_authority',
  ] as const) {
    checkAuthority(config[key], `${prefix}.${key}`);
  }
  return config;
}

export function resolveConfig(partial: Partial<RoomConfig>): RoomConfig {
  return { ...DEFAULT_ROOM_CONFIG, ...partial };
}

/** Settings patch: only mutable keys; returns the new config and the keys whose values changed. */
export function applySettings(current: RoomConfig, raw: unknown): { config: RoomConfig; changed: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalidInput('settings', 'settings must be a JSON object of mutable config keys.', 'wrong_type');
  }
  const record = raw as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if ((IMMUTABLE_KEYS as readonly string[]).includes(key) || key === 'password' || key === 'about') {
      throw invalidInput(
        `settings.${key}`,
        `"${key}" cannot be changed after creation. Mutable keys: ${MUTABLE_KEYS.join(', ')}.`,
        'immutable_key',
        { allowed_keys: MUTABLE_KEYS },
      );
    }
  }
  const partial = parsePartialConfig(record, 'settings');
  const config = resolveConfig({ ...current, ...partial });
  const changed = Object.keys(record).filter(
    (k) => JSON.stringify(current[k as keyof RoomConfig]) !== JSON.stringify(config[k as keyof RoomConfig]),
  );
  return { config, changed };
}
