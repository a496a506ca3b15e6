/**
 * One script for the agent-framework suites (test/frameworks/): whatever framework turned the MCP
 * catalogs into tool objects, the same rooms are run through them — one per ballot kind, from
 * create_room to an outcome whose receipt chain verifies against the room's own URL — and the same
 * refusal must come back with its code. Each suite only says how its framework's tools are called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConclaveClient, verifyRoomReceiptChain } from '../../src/client/index.js';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import type { Catalog } from '../../src/operations/types.js';
import { OPERATIONS } from '../../src/operations/table.js';
import { type RunningService, startService } from './service.js';

/** What a tool call came to, read the framework's way: the result object or the error envelope. */
export interface ToolAnswer {
  isError: boolean;
  body: any;
}

export type CallTool = (name: string, args: Record<string, unknown>) => Promise<ToolAnswer>;

/** The framework's tools for each catalog: the host's (/mcp/host) and the participant's (/mcp). */
export interface FrameworkTools {
  host: CallTool;
  participant: CallTool;
}

/** The tool names a catalog lists, for comparing with what a framework loaded. */
function catalogToolNames(catalog: Catalog): string[] {
  return buildCatalog(catalog, OPERATIONS)
    .map((tool) => tool.name)
    .sort();
}

interface BallotRound {
  kind: string;
  mechanism: string;
  /** The creator's ballot, then the participant's: choose arguments besides slug and token. */
  creator: Record<string, unknown>;
  participant: Record<string, unknown>;
  winner: string;
}

const OPTIONS = ['alpha', 'beta', 'gamma'];

/** Every ballot kind, in the forms a framework's declared schema offers (docs/agents.md, One ballot, every framework). */
const BALLOT_ROUNDS: readonly BallotRound[] = [
  {
    kind: 'single choice',
    mechanism: 'plurality',
    creator: { choice: 1 },
    participant: { choice: 'alpha' },
    winner: 'alpha',
  },
  {
    kind: 'approval',
    mechanism: 'approval',
    creator: { choice: ['beta'] },
    participant: { choice: ['beta', 'gamma'] },
    winner: 'beta',
  },
  {
    kind: 'ranked',
    mechanism: 'ranked_choice',
    creator: { choice: ['gamma', 'alpha', 'beta'] },
    participant: { choice: [3, 'beta'] },
    winner: 'gamma',
  },
  {
    kind: 'score',
    mechanism: 'score_vote',
    creator: {
      scores: [
        { option: 'beta', points: 5 },
        { option: 1, points: 2 },
      ],
    },
    participant: { scores: [{ option: '#2', points: 4 }] },
    winner: 'beta',
  },
  {
    kind: 'quadratic',
    mechanism: 'quadratic_vote',
    creator: { scores: [{ option: 'alpha', points: 4 }] },
    participant: {
      scores: [
        { option: 1, points: 1 },
        { option: 'gamma', points: 4 },
      ],
    },
    winner: 'alpha',
  },
];

async function answered(call: CallTool, name: string, args: Record<string, unknown>) {
  const answer = await call(name, args);
  expect(answer.isError, `${name}: ${JSON.stringify(answer.body)}`).toBe(false);
  return answer.body;
}

/**
 * One room of `round`: the host creates it, a participant joins, both choose (the participant on
 * /mcp, the creator with its creator token there too), the participant reads the outcome, and its
 * receipt chain verifies against the service's keys and the room's URL with the expected winner.
 */
async function decideRound(base: string, tools: FrameworkTools, round: BallotRound): Promise<void> {
  const created = await answered(tools.host, 'create_room', {
    question: `Which option (${round.kind})?`,
    options: OPTIONS,
    display_name: 'host',
    config: { mechanism: round.mechanism, early_close: true, settle_window: 0 },
  });
  const { slug, creator_token: hostToken, url } = created as { slug: string; creator_token: string; url: string };
  const joined = await answered(tools.participant, 'join_room', { slug, display_name: 'ann' });
  const token = joined.participant_token as string;

  const first = await answered(tools.participant, 'choose', { slug, token, ...round.participant, reason: 'mine' });
  expect(first).toMatchObject({ ok: true, slug, decision: 1, status: 'voting' });
  const last = await answered(tools.participant, 'choose', { slug, token: hostToken, ...round.creator });
  expect(last).toMatchObject({ status: 'resolved', resolved_winner: round.winner });

  const outcome = await answered(tools.participant, 'outcome', { slug, token });
  const jwks = await new ConclaveClient({ baseUrl: base }).jwks();
  const report = await verifyRoomReceiptChain(outcome, { jwks, room: url });
  expect(report.errors).toEqual([]);
  expect(report.ok).toBe(true);
  expect(report.decisions.map((decision) => decision.winner)).toEqual([round.winner]);
}

/**
 * A refusal through the framework keeps the protocol's code: a ballot naming no option of the
 * slate is choice.invalid_option, with the options listed in its details.
 */
async function refusalKeepsItsCode(tools: FrameworkTools): Promise<void> {
  const created = await answered(tools.host, 'create_room', { question: 'Which one?', options: OPTIONS });
  const answer = await tools.participant('choose', {
    slug: created.slug,
    token: created.creator_token,
    choice: 'delta',
  });
  expect(answer.isError).toBe(true);
  expect(answer.body.error.code).toBe('choice.invalid_option');
  expect(answer.body.error.message).toContain('"delta" does not name an option');
}

/** What a suite's framework made of both catalogs. */
export interface LoadedFramework {
  /** The names of the tools it built, per catalog. */
  names: Record<Catalog, string[]>;
  tools: FrameworkTools;
  close(): Promise<void>;
}

/**
 * The suite every framework file runs: load both catalogs at `base` the framework's way, check it
 * built every tool (and whatever `listed` adds), decide a room of each ballot kind, keep an error's code.
 */
export function frameworkSuite<F extends LoadedFramework>(
  title: string,
  load: (base: string) => Promise<F>,
  listed: (framework: F) => void = () => {},
): void {
  describe(title, () => {
    let svc: RunningService;
    let framework: F | undefined;

    beforeAll(async () => {
      svc = await startService({ clock: new ManualClock() });
      framework = await load(svc.base);
    });
    afterAll(async () => {
      await framework?.close();
      await svc?.stop();
    });

    it('lists every tool of both catalogs', () => {
      expect([...framework!.names.host].sort()).toEqual(catalogToolNames('host'));
      expect([...framework!.names.participant].sort()).toEqual(catalogToolNames('participant'));
      listed(framework!);
    });

    for (const round of BALLOT_ROUNDS) {
      it(
        `decides a room of ${round.kind} ballots to a verified outcome`,
        () => decideRound(svc.base, framework!.tools, round),
        60_000,
      );
    }

    it('keeps the error code of a refusal', () => refusalKeepsItsCode(framework!.tools));
  });
}
