/**
 * `conclave room …`: create, join, read and act in rooms. Tokens the service hands out are saved per
 * room and role (see credentials.ts); host actions act with the creator token, the rest with the
 * participant token.
 */
import { type Command, Option } from 'commander';
import type { Body, ConclaveClient } from '../client/index.js';
import { type SeatRole, SeatTaken, saveSeat } from './credentials.js';
import {
  CHOICE_VISIBILITY,
  type CreateOptions,
  describeChoice,
  describeDelta,
  describeProposal,
  describeRoom,
  MECHANISMS,
  numbered,
  roomConfig,
  STANCES,
  VISIBILITY,
} from './room-view.js';
import { context, count, EXIT, Exit, parseJson, positiveInteger, print, seconds, summary } from './shell.js';
import { tallyLine } from './tallies.js';
import { nextSealing, printSealing } from './wait-command.js';

export function registerRoomCommands(program: Command): void {
  const room = program.command('room').description('create, join, read and act in rooms');

  room
    .command('create')
    .description('create a room; your creator token is saved to the config file')
    .option('-q, --question <text>', 'the first question (opens decision #1 at once)')
    .option('-o, --option <option...>', 'the options (repeat or list)')
    .option('--about <text>', 'what the room is about (needed without --question)')
    .option('--context <text>', 'background for the first question')
    .option('--name <display name>', 'your display name')
    .option('--password <password>', 'a room password (12 characters or more; makes the room private)')
    .addOption(
      new Option('--mechanism <name>', 'how choices are counted (default simple_majority)').choices(MECHANISMS),
    )
    .addOption(
      new Option('--visibility <who>', 'who may find and read the room (default unlisted)').choices(VISIBILITY),
    )
    .option('--voting-window <seconds>', 'how long each decision stays open for choices (default 3600)', seconds)
    .option('--early-close', 'seal a decision as soon as its outcome cannot change')
    .option('--settle-window <seconds>', 'with --early-close: how long a determined decision settles first', count)
    .option('--quorum <n>', 'choices needed for a decision to count (also the electorate floor)', positiveInteger)
    .addOption(
      new Option('--choice-visibility <when>', "when members see each other's choices (default live)").choices(
        CHOICE_VISIBILITY,
      ),
    )
    .option('--max-open-decisions <n>', 'decisions that may be open at once (1 to 5, default 1)', positiveInteger)
    .option('--persistent', 'keep asking questions after the first decision seals (type persistent)')
    .option('--no-creator-votes', 'you host without choosing')
    .option('--config <json>', 'any other room config as JSON, e.g. \'{"max_participants":8}\'')
    .action(async (options: CreateOptions, command: Command) => {
      const { client, base, json, configFile } = await context(command);
      if (!options.question && !options.about)
        throw new Exit(EXIT.usage, 'give --question <text>, --about <text> or both');
      const created: Body = await client.createRoom({
        ...(options.question ? { question: options.question } : {}),
        ...(options.option ? { options: options.option } : {}),
        ...(options.about ? { about: options.about } : {}),
        ...(options.context ? { context: options.context } : {}),
        ...(options.password ? { password: options.password } : {}),
        ...(options.name ? { display_name: options.name } : {}),
        ...roomConfig(options),
      } as never);
      await saveSeat(
        configFile,
        created.slug,
        'creator',
        { token: created.creator_token, participant_id: created.participant_id, ...nameOf(options.name) },
        { base },
      );
      const config = (created.config ?? {}) as Body;
      const decision = created.decision as Body | null | undefined;
      print(
        json,
        created,
        [
          `✓ room ${created.slug} created: ${created.url ?? `${base}/r/${created.slug}`}`,
          `  ${config.visibility} · ${config.mechanism} · voting window ${config.voting_window} s${config.early_close ? ' · early close' : ''}`,
          ...(decision ? [`  decision #${decision.seq}: ${decision.question}`, ...numbered(decision.options)] : []),
          `  creator token saved to ${configFile}`,
        ].join('\n'),
      );
    });

  room
    .command('join <slug>')
    .description(
      'take a seat; its participant token is saved beside any creator token you hold for the room (never replacing it)',
    )
    .option('--name <display name>', 'your display name')
    .option('--invite <token>', 'an invite token')
    .option('--password <password>', 'the room password')
    .option('--replace', 'replace the participant token already saved for this room (its seat stays in the room)')
    .action(
      async (
        slug: string,
        options: { name?: string; invite?: string; password?: string; replace?: boolean },
        command: Command,
      ) => {
        // Join with the flags' credentials only: a stored creator token must not be presented as the joiner.
        const { client, base, json, configFile, config } = await context(command, slug, 'none');
        const held = config.rooms[slug]?.participant;
        // Refuse before joining: a seat the service created and the shell could not keep is worse.
        if (held && !options.replace) throw seatTaken(new SeatTaken(slug, 'participant', held), configFile);
        const joined = await client.joinRoom({
          slug,
          ...(options.name ? { display_name: options.name } : {}),
          ...(options.invite ? { invite: options.invite } : {}),
          ...(options.password ? { password: options.password } : {}),
        });
        if (typeof joined.participant_token === 'string') {
          await saveSeat(
            configFile,
            slug,
            'participant',
            { token: joined.participant_token, participant_id: joined.participant_id, ...nameOf(options.name) },
            { base, replace: options.replace === true },
          );
        }
        const kept = config.rooms[slug]?.creator ? '; your creator token is kept' : '';
        print(json, joined, `✓ joined ${slug} as ${joined.participant_id}; token saved to ${configFile}${kept}`);
      },
    );

  room
    .command('read <slug>')
    .description(
      'the room as an agent sees it: what is being decided, who has chosen, the discussion (--json: the whole view)',
    )
    .option('--since <n>', 'only what changed after this event seq (one line each)', count)
    .action(async (slug: string, options: { since?: number }, command: Command) => {
      const { client, json } = await context(command, slug);
      const view: Body = await client.getRoom({
        slug,
        ...(options.since !== undefined ? { since: options.since } : {}),
      });
      print(json, view, options.since !== undefined ? describeDelta(view) : describeRoom(view));
    });

  const act = (
    name: string,
    description: string,
    role: SeatRole,
    build: (args: string[], options: Body) => Record<string, unknown>,
    configure: (command: Command) => Command = (command) => command,
  ) => {
    configure(room.command(name).description(description).option('--decision <seq>', 'target this decision')).action(
      async (...args: unknown[]) => {
        const command = args.at(-1) as Command;
        const options = args.at(-2) as Body;
        const positional = args.slice(0, -2) as string[];
        const slug = positional[0]!;
        const { client, json } = await context(command, slug, role);
        const verb = name.split(' ')[0]!;
        const decision = options.decision === undefined ? undefined : Number(options.decision);
        if (decision !== undefined && !(Number.isInteger(decision) && decision > 0))
          throw new Exit(EXIT.usage, `--decision ${options.decision} is not a decision number (1, 2, …)`);
        const result = await ACTIONS[verb]!(client, {
          slug,
          ...build(positional.slice(1), options),
          ...(decision !== undefined ? { decision } : {}),
        });
        if (verb === 'choose' && options.wait && result.status !== 'resolved') {
          const seq = result.decision as number;
          if (!json) console.log(`✓ choose ${slug}: ${describe(verb, result)}`);
          printSealing(json, slug, await nextSealing(client, slug, (n) => n !== seq, null));
          return;
        }
        print(json, result, `✓ ${verb} ${slug}: ${describe(verb, result)}`);
      },
    );
  };

  act(
    'discuss <slug> <text>',
    'post to the discussion',
    'participant',
    ([text], options) => ({ body: text, ...(options.stance ? { stance: options.stance } : {}) }),
    (c) =>
      c.addOption(new Option('--stance <stance>', 'how it relates to the discussion, shown with it').choices(STANCES)),
  );
  act('propose <slug> <option>', 'propose an option', 'participant', ([option]) => ({ option }));
  act(
    'choose <slug> <choice>',
    'choose an option (a JSON ballot for ranked, score or approval decisions)',
    'participant',
    ([choice], options) => ({
      choice: choice!.startsWith('{') || choice!.startsWith('[') ? parseJson(choice!, 'choice') : choice,
      ...(options.reason ? { reason: options.reason } : {}),
    }),
    (c) =>
      c
        .option('--reason <text>', 'why (shown to the room)')
        .option('--wait', 'when the decision is still open, wait until it seals and print the result'),
  );
  act(
    'abstain <slug>',
    'abstain on a decision',
    'participant',
    (_args, options) => ({ reason: options.reason ?? 'abstaining' }),
    (c) => c.option('--reason <text>', 'why'),
  );
  act(
    'ask <slug> <question>',
    'open another decision in the room (fluid; with --proposal-window options are collected first)',
    'creator',
    ([question], options) => ({
      question,
      ...(options.option ? { options: options.option } : {}),
      ...(options.context ? { context: options.context } : {}),
      ...(options.votingWindow ? { voting_window: options.votingWindow } : {}),
      ...(options.proposalWindow ? { proposal_window: options.proposalWindow } : {}),
      ...(options.agreement ? { agreement: true } : {}),
    }),
    (c) =>
      c
        .option('-o, --option <option...>', 'the options (repeat or list)')
        .option('--context <text>', 'background for the decision')
        .option('--voting-window <seconds>', 'how long choices stay open', seconds)
        .option('--proposal-window <seconds>', 'collect options this long before choosing opens', seconds)
        .option('--agreement', 'require unanimous acceptance (majority rooms)'),
  );
  act(
    'start-choosing <slug>',
    "freeze a collecting decision's options and open choices now (the oldest collecting one, or --decision)",
    'creator',
    () => ({}),
  );
  act(
    'close <slug>',
    'close the room (creator or operator)',
    'creator',
    (_args, options) => (options.statement ? { statement: options.statement } : {}),
    (c) => c.option('--statement <text>', 'a closing statement'),
  );
  act(
    'invite <slug>',
    'create an invite (creator or operator)',
    'creator',
    (_args, options) => ({ label: options.label ?? 'invite' }),
    (c) => c.option('--label <text>', 'what the invite is for'),
  );

  room
    .command('outcome <slug>')
    .description('the decided list with winners, tallies and receipts')
    .action(async (slug: string, _options: unknown, command: Command) => {
      const { client, json } = await context(command, slug);
      const outcome = await client.outcome({ slug });
      const lines = (outcome.decisions as Body[]).flatMap((d) => {
        const head = `#${d.seq} ${d.question} → ${d.resolved_winner ?? d.outcome_status ?? d.status}${d.receipt_hash ? `  (${String(d.receipt_hash).slice(0, 19)}…)` : ''}`;
        const tally = tallyLine(d.receipt_jws);
        return tally ? [head, `   ${tally}`] : [head];
      });
      print(json, outcome, [`${slug}: ${outcome.status}`, ...lines].join('\n'));
    });

  room
    .command('delete <slug>')
    .description('delete a room for good (operator)')
    .action(async (slug: string, _options: unknown, command: Command) => {
      const { client, json } = await context(command, slug, 'creator');
      const deleted = await client.deleteRoom({ slug });
      print(json, deleted, `✓ room ${slug} deleted`);
    });
}

// biome-ignore lint/suspicious/noExplicitAny: each action's input is built from its own flags above
const ACTIONS: Record<string, (client: ConclaveClient, input: any) => Promise<Body>> = {
  discuss: (c, i) => c.discuss(i),
  propose: (c, i) => c.propose(i),
  choose: (c, i) => c.choose(i),
  abstain: (c, i) => c.abstain(i),
  ask: (c, i) => c.ask(i),
  'start-choosing': (c, i) => c.startChoosing(i),
  close: (c, i) => c.closeRoom(i),
  invite: (c, i) => c.createInvite(i),
};

function describe(verb: string, result: Body): string {
  if (verb === 'choose') return describeChoice(result);
  if (verb === 'propose') return describeProposal(result);
  if (verb === 'discuss') return `posted (${result.id})`;
  const decision = result.decision as Body | undefined;
  if (verb === 'ask' && decision) return `decision #${decision.seq} opened (${decision.status ?? 'open'})`;
  if (verb === 'start-choosing' && decision)
    return `decision #${decision.seq} ${result.already_open ? 'was already open for choices' : 'is open for choices'}`;
  return summary(result);
}

function nameOf(name: string | undefined): { display_name?: string } {
  return name ? { display_name: name } : {};
}

function seatTaken(error: SeatTaken, configFile: string): Exit {
  const when = error.seat.saved_at ? ` (saved ${error.seat.saved_at})` : '';
  return new Exit(
    EXIT.local,
    `you already hold a ${error.role} token for ${error.slug}${when} in ${configFile}: it is kept. Pass --replace to join again and replace it, or act with --token.`,
  );
}
