/**
 * Where a tool's arguments differ from its REST operation's input (docs/agents.md, MCP), declared here
 * instead of in the operations. Everything not listed maps one to one: an argument named like an
 * input field (path parameters such as `slug` included) is that field.
 */
import type { z } from 'zod';
import { DECLARED_TOOL_CHOICE } from '../operations/choose.js';
import type { Catalog } from '../operations/types.js';

export interface ToolArgumentMap {
  /** Tool argument → operation input field, where the names differ. */
  readonly rename?: Readonly<Record<string, string>>;
  /** The tool takes `password` as the read-access credential (X-Room-Password on REST), not as an input field. */
  readonly passwordCredential?: boolean;
  /** Input fields the tool sets itself; they are not arguments. */
  readonly fixed?: Readonly<Record<string, unknown>>;
  /** Input fields that default to a value when a given argument is present (keyed by argument). */
  readonly impliedBy?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /**
   * Arguments the tool declares narrower than the operation documents them, where a form would not
   * survive the agent frameworks' schema conversions; the call is still parsed by the operation's schema.
   */
  readonly declared?: Readonly<Record<string, z.ZodType>>;
}

/** A second tool over the operation whose `mcp.tool` is `from`, with its own arguments. */
export interface DerivedTool extends ToolArgumentMap {
  readonly tool: string;
  readonly from: string;
  readonly catalogs: readonly Catalog[];
  readonly title: string;
}

export const TOOL_ARGUMENTS: Readonly<Record<string, ToolArgumentMap>> = {
  read_room: { passwordCredential: true },
  outcome: { passwordCredential: true },
  list_decisions: { passwordCredential: true },
  list_events: { passwordCredential: true },
  // GET /next-action (docs/agents.md, The REST loop): `since` is an event cursor and switches the wait to activity mode.
  wait: { rename: { wait_seconds: 'wait', since: 'since_seq' }, impliedBy: { since: { for: 'activity' } } },
  unregister_webhook: { rename: { webhook_id: 'id' } },
  // The option→points map stays accepted; score and quadratic ballots are declared as `scores` (docs/agents.md, One ballot, every framework).
  choose: { declared: { choice: DECLARED_TOOL_CHOICE } },
};

export const DERIVED_TOOLS: readonly DerivedTool[] = [
  {
    tool: 'wait_outcome',
    from: 'wait',
    catalogs: ['host'],
    title: 'Wait for a decision to seal',
    rename: { wait_seconds: 'wait' },
    fixed: { for: 'completion' },
  },
];
