/**
 * What `conclave room …` prints for people (docs/cli.md, Rooms): the room config its flags set, and
 * the agent view, a delta, a choice and a proposal as lines to read. `--json` prints the bodies
 * instead (shell.ts, print).
 */
import type { Body } from '../client/index.js';
import { WIRED_MECHANISMS } from '../mechanisms/catalog.js';
import { EXIT, Exit, parseJson } from './shell.js';

export const MECHANISMS = [...WIRED_MECHANISMS];
export const VISIBILITY = ['public', 'unlisted', 'private'];
export const CHOICE_VISIBILITY = ['live', 'after_decided', 'never'];
export const STANCES = ['agree', 'disagree', 'clarify', 'extend'];

export interface CreateOptions {
  question?: string;
  option?: string[];
  about?: string;
  context?: string;
  name?: string;
  password?: string;
  mechanism?: string;
  visibility?: string;
  votingWindow?: number;
  earlyClose?: boolean;
  settleWindow?: number;
  quorum?: number;
  choiceVisibility?: string;
  maxOpenDecisions?: number;
  persistent?: boolean;
  /** False with --no-creator-votes. */
  creatorVotes: boolean;
  config?: string;
}

/** The room config of `room create`'s flags over its `--config` JSON; a key given both ways is a usage error. */
export function roomConfig(options: CreateOptions): { config?: Body } {
  const flags: Body = {
    ...(options.mechanism ? { mechanism: options.mechanism } : {}),
    ...(options.visibility ? { visibility: options.visibility } : {}),
    ...(options.votingWindow !== undefined ? { voting_window: options.votingWindow } : {}),
    ...(options.earlyClose ? { early_close: true } : {}),
    ...(options.settleWindow !== undefined ? { settle_window: options.settleWindow } : {}),
    ...(options.quorum !== undefined ? { quorum: options.quorum } : {}),
    ...(options.choiceVisibility ? { choice_visibility: options.choiceVisibility } : {}),
    ...(options.maxOpenDecisions !== undefined ? { max_open_decisions: options.maxOpenDecisions } : {}),
    ...(options.persistent ? { type: 'persistent' } : {}),
    ...(options.creatorVotes === false ? { creator_votes: false } : {}),
  };
  const given = options.config ? parseJson(options.config, '--config') : {};
  if (given === null || typeof given !== 'object' || Array.isArray(given))
    throw new Exit(EXIT.usage, '--config must be a JSON object of room config keys, e.g. \'{"max_participants":8}\'');
  const twice = Object.keys(flags).filter((key) => key in given);
  if (twice.length > 0)
    throw new Exit(EXIT.usage, `--config sets ${twice.join(', ')}, which a flag sets too: give each setting once`);
  const config = { ...given, ...flags };
  return Object.keys(config).length > 0 ? { config } : {};
}

/** `  1. pizza` lines. */
export function numbered(options: unknown, indent = '    '): string[] {
  return Array.isArray(options) ? options.map((option, i) => `${indent}${i + 1}. ${option}`) : [];
}

/** The agent view (GET /api/rooms/{slug}) as a page of text. */
export function describeRoom(view: Body): string {
  const lines = [`${view.slug}: ${view.status} · you are ${view.role}`, `${view.brief}`];
  const decision = view.decision as Body | null;
  if (decision) lines.push('', ...describeOpen(decision, view));
  for (const row of (view.decisions_open as Body[] | undefined) ?? []) {
    if (row.seq === decision?.seq) continue;
    lines.push(
      `also open: #${row.seq} ${row.question} (${row.status}, ${row.choices_cast} chosen, ${row.seconds_left} s left)${row.needs_you ? ' — needs your choice' : ''}`,
    );
  }
  const discussion = (view.discussion as Body[] | undefined) ?? [];
  if (discussion.length > 0) {
    const earlier = view.discussion_earlier ? ` (${view.discussion_earlier} earlier not shown)` : '';
    lines.push('', `discussion${earlier}:`);
    for (const row of discussion) {
      const about = row.decision !== undefined && row.decision !== null ? ` #${row.decision}` : '';
      lines.push(`  ${row.who}${row.stance ? ` [${row.stance}]` : ''}${about}: ${row.said}`);
    }
  }
  const decided = (view.decided as Body[] | undefined) ?? [];
  if (decided.length > 0) {
    const earlier = view.decided_earlier ? ` (${view.decided_earlier} earlier not shown)` : '';
    lines.push('', `decided${earlier}:`);
    for (const row of decided)
      lines.push(`  #${row.seq} ${row.question} → ${row.winner ?? `no winner (${row.outcome})`}`);
  }
  return lines.join('\n');
}

function describeOpen(decision: Body, view: Body): string[] {
  const timing =
    decision.status === 'proposing'
      ? `collecting options${decision.seconds_until_voting !== undefined ? `, choosing opens in ${decision.seconds_until_voting} s` : ''}`
      : `${decision.status}, ${decision.seconds_left} s left`;
  const roster = view.roster as Body | undefined;
  const waiting = (roster?.waiting_for as string[] | undefined) ?? [];
  const rules = view.rules as Body | undefined;
  const settling = decision.settling as Body | undefined;
  return [
    `#${decision.seq} ${decision.question}${decision.agreement ? ' (agreement)' : ''} — ${timing}`,
    ...(decision.context ? [`  ${decision.context}`] : []),
    ...numbered(decision.options, '  '),
    `  ${decision.choices_cast} of ${decision.eligible_voters} chosen${waiting.length > 0 ? `; waiting for ${waiting.join(', ')}` : ''}`,
    ...(settling
      ? [
          `  settling: seals in ${settling.seals_in_seconds} s → ${settling.presumptive ?? 'no winner'} unless a choice changes it`,
        ]
      : []),
    ...(rules?.how_to_choose ? [`  to choose: ${rules.how_to_choose}`] : []),
  ];
}

/** A delta read (`--since`): the state line, then one line per entry. */
export function describeDelta(view: Body): string {
  const entries = (view.new as Body[] | undefined) ?? [];
  return [
    `${view.slug}: ${view.state} (through ${view.current_through})`,
    ...(view.your_status ? [`  ${view.your_status}`] : []),
    ...entries.map((entry) => `  ${entry.seq} ${deltaLine(entry)}`),
  ].join('\n');
}

function deltaLine(entry: Body): string {
  const on = entry.decision !== undefined && entry.decision !== null ? ` #${entry.decision}` : '';
  switch (entry.type) {
    case 'discussion':
      return `${entry.who}${entry.stance ? ` [${entry.stance}]` : ''}${on}: ${entry.said}`;
    case 'option_proposed':
      return `${entry.who} proposed${on}: ${entry.option}`;
    case 'decision_opened':
      return `${entry.who} opened${on}: ${entry.question}`;
    case 'choosing_started':
      return `choosing opened${on}`;
    case 'choice_submitted':
      return `${entry.who} ${entry.revised ? 'revised a choice' : 'chose'}${on}${entry.option !== undefined ? `: option ${entry.option}` : entry.choice !== undefined ? `: ${entry.choice}` : ''}`;
    case 'abstained':
      return `${entry.who} abstained${on}: ${entry.reason}`;
    case 'decision_resolved':
      return `sealed${on}: ${entry.question} → ${entry.winner ?? `no winner (${entry.outcome})`}`;
    case 'joined':
      return `${entry.who} joined as ${entry.role}`;
    case 'role_updated':
      return `${entry.who} is now ${entry.role}`;
    case 'room_concluded':
      return `room closed${entry.closing_statement ? `: ${entry.closing_statement}` : ''}`;
    default: {
      const { seq: _seq, type, at: _at, ...rest } = entry;
      return `${type} ${JSON.stringify(rest)}`;
    }
  }
}

/** POST /choose's answer: the ballot recorded and where the decision stands. */
export function describeChoice(result: Body): string {
  const ballot = typeof result.cast_choice === 'string' ? result.cast_choice : JSON.stringify(result.cast_choice);
  const head = `${result.revised ? 'revised your choice' : 'chose'} ${ballot} on decision #${result.decision}`;
  if (result.status === 'resolved') {
    const outcome = result.resolved_outcome ?? 'resolved';
    return `${head}; it sealed → ${result.resolved_winner ? `${result.resolved_winner} (${outcome})` : `no winner (${outcome})`}`;
  }
  const settling = result.settling as Body | undefined;
  if (settling)
    return `${head}; determined: seals in ${settling.seals_in_seconds} s → ${settling.presumptive ?? 'no winner'} unless a choice changes it`;
  return `${head}; still open (--wait prints the result when it seals)`;
}

/** POST /options' answer: whether the option joined the slate, and the slate. */
export function describeProposal(result: Body): string {
  const options = (result.options as string[] | undefined) ?? [];
  // A text already on the slate comes back accepted with a reason (docs/concepts.md, Decisions and slates).
  const head =
    result.accepted && !result.reason
      ? `added to decision #${result.decision}`
      : `not added to decision #${result.decision}: ${result.reason ?? 'already on the slate'}`;
  const phase = result.choosing_open ? 'choosing is open' : 'collecting options; choosing not open yet';
  return [`${head}; ${phase}`, ...numbered(options)].join('\n');
}
