/**
 * RoomConfig: defaults, the mutable subset, and validation with the protocol's reasons
 * (docs/configuration.md). One validator serves creation and settings patches.
 */
import { z } from 'zod';
import { invalidInput, type ProtocolError } from '../errors.js';
import { RESERVED_MECHANISMS, WIRED_MECHANISMS } from '../mechanisms/index.js';
import type { AuthorityConfig, RoomConfig } from './types.js';

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
    kind: z.enum(['none', 'operator', 'designated', 'any_participant']),
    participant_ids: z.array(z.string().min(1).max(200)).max(1000).optional(),
  })
  .meta({ id: 'AuthorityConfig' });

/** Every key optional: the shape accepted at creation; the resolved config has them all. */
export const roomConfigSchema = z
  .strictObject({
    type: z.enum(['ephemeral', 'persistent']),
    visibility: z.enum(['public', 'unlisted', 'private']),
    mechanism: z.enum(WIRED_MECHANISMS as unknown as [string, ...string[]]),
    invite_authority: authorityConfigSchema,
    option_proposal_authority: authorityConfigSchema,
    decision_opening_authority: authorityConfigSchema,
    conclusion_authority: authorityConfigSchema,
    auth: z.enum(['token_only', 'mandate_required', 'either']),
    quorum: int(1, 1_000_000).nullable(),
    voting_window: int(60, 1_209_600),
    deliberation_mode: z.enum(['optional', 'disabled']),
    max_participants: int(1, 1_000_000).nullable(),
    max_options: int(2, 500),
    max_deliberation_messages_per_participant: int(1, 500),
    max_total_deliberation_messages: int(1, 5000),
    read_receipts: z.boolean(),
    choice_visibility: z.enum(['live', 'after_decided', 'never']),
    early_close: z.boolean(),
    settle_window: int(0, 3600),
    creator_votes: z.boolean(),
    max_open_decisions: int(1, 5),
  })
  .partial()
  .meta({ id: 'RoomConfig' });

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
      return invalidInput(
        field,
        `Unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')} in ${field}. Allowed keys: ${allowed.join(', ')}.`,
        'unknown_keys',
        { allowed_keys: allowed },
      );
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
