#!/usr/bin/env node
/**
 * `conclave`: run and inspect a server, take part in rooms from a shell, and verify a room's history
 * without trusting the server. Readable output by default, `--json` for scripts. Exit codes:
 * 0 done, 1 verification failed, 2 usage error, 3 the service refused (its error code is printed),
 * 4 the service could not be reached.
 */
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import {
  type Body,
  ConclaveClient,
  ConclaveError,
  ConclaveNetworkError,
  type Jwks,
  verifyRoomReceiptChain,
} from '../client/index.js';
import { configPath, readConfig, rememberRoomToken } from './credentials.js';
import { formatChainReport } from './report.js';

const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, unreachable: 4 } as const;
const DEFAULT_BASE = 'http://127.0.0.1:3000';
const SECRET_FIELDS = new Set([
  'creator_token',
  'participant_token',
  'token',
  'invite_token',
  'signing_secret',
  'access_token',
]);

interface GlobalOptions {
  base?: string;
  token?: string;
  mandate?: string;
  json?: boolean;
}

/** A failure that ends the command with this exit code and message. */
class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const program = new Command()
  .name('conclave')
  .description('Conclave: deliberation rooms with signed, hash-chained receipts.')
  .addOption(new Option('--base <url>', 'service base URL').env('CONCLAVE_URL'))
  .addOption(
    new Option('--token <token>', 'participant or operator token (prefer the env or the config file)').env(
      'CONCLAVE_TOKEN',
    ),
  )
  .addOption(new Option('--mandate <jws>', 'a mandate to act under').env('CONCLAVE_MANDATE'))
  .option('--json', 'print JSON for scripts')
  .showHelpAfterError()
  .exitOverride();

// --- context ---------------------------------------------------------------------------------

async function context(command: Command, slug?: string) {
  const options = command.optsWithGlobals<GlobalOptions>();
  const file = configPath();
  const config = await readConfig(file);
  const room = slug ? config.rooms?.[slug] : undefined;
  const base = (options.base ?? room?.base ?? config.base ?? DEFAULT_BASE).replace(/\/+$/, '');
  const token = options.token ?? room?.token;
  const client = new ConclaveClient({
    baseUrl: base,
    ...(token ? { token } : {}),
    ...(options.mandate ? { mandate: options.mandate } : {}),
  });
  return { client, base, json: options.json === true, configFile: file };
}

function print(json: boolean, body: Body, readable: string): void {
  console.log(json ? JSON.stringify(masked(body), null, 2) : readable);
}

/** Credentials never reach the terminal: they are stored in the config file instead. */
function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      SECRET_FIELDS.has(key) && typeof member === 'string' ? '[saved]' : masked(member),
    ]),
  );
}

// --- server ----------------------------------------------------------------------------------

program
  .command('serve')
  .description('run the service (what `npm start` runs), configured by the environment (see README)')
  .action(async () => {
    const { runServer } = await import('../server-process.js');
    await runServer();
  });

const keys = program.command('keys').description("the service's receipt signing keys (in DATA_DIR/keys)");
keys
  .command('list')
  .description('list every key in the JWKS, current first')
  .action(async (_options: unknown, command: Command) => {
    const keyring = await openKeyring();
    const jwks = keyring.jwks();
    const json = command.optsWithGlobals<GlobalOptions>().json === true;
    print(json, jwks, jwks.keys.map((k, i) => `${i === 0 ? '* current' : '  retired'}  ${k.kid}`).join('\n'));
  });
keys
  .command('rotate')
  .description(
    'make a new signing key current; old keys stay in the JWKS so old receipts verify (restart the service to sign with it)',
  )
  .action(async (_options: unknown, command: Command) => {
    const keyring = await openKeyring();
    const key = await keyring.rotate();
    const json = command.optsWithGlobals<GlobalOptions>().json === true;
    print(
      json,
      { kid: key.kid, keys: keyring.jwks().keys.length },
      `✓ new signing key ${key.kid}; the JWKS keeps ${keyring.jwks().keys.length - 1} older key(s). Restart the service to sign with it.`,
    );
  });

async function openKeyring() {
  const { loadConfig } = await import('../config.js');
  const { loadKeyring } = await import('../receipts/index.js');
  const config = loadConfig();
  return loadKeyring({ dataDir: config.dataDir, ...(config.signingKeySeed ? { seedHex: config.signingKeySeed } : {}) });
}

// --- rooms -----------------------------------------------------------------------------------

const room = program.command('room').description('create, join, read and act in rooms');

room
  .command('create')
  .description('create a room; your creator token is saved to the config file')
  .requiredOption('-q, --question <text>', 'the first question')
  .option('-o, --option <option...>', 'the options (repeat or list)')
  .option('--config <json>', 'room config as JSON, e.g. \'{"voting_window":600}\'')
  .option('--name <display name>', 'your display name')
  .action(
    async (options: { question: string; option?: string[]; config?: string; name?: string }, command: Command) => {
      const { client, base, json, configFile } = await context(command);
      const created = await client.createRoom({
        question: options.question,
        ...(options.option ? { options: options.option } : {}),
        ...(options.config ? { config: parseJson(options.config, '--config') } : {}),
        ...(options.name ? { display_name: options.name } : {}),
      });
      await rememberRoomToken(configFile, created.slug, created.creator_token, base);
      print(
        json,
        created,
        `✓ room ${created.slug} created: ${created.url ?? `${base}/r/${created.slug}`}\n  creator token saved to ${configFile}`,
      );
    },
  );

room
  .command('join <slug>')
  .description('take a seat; your token is saved to the config file')
  .option('--name <display name>', 'your display name')
  .option('--invite <token>', 'an invite token')
  .option('--password <password>', 'the room password')
  .action(async (slug: string, options: { name?: string; invite?: string; password?: string }, command: Command) => {
    const { client, base, json, configFile } = await context(command, slug);
    const joined = await client.joinRoom({
      slug,
      ...(options.name ? { display_name: options.name } : {}),
      ...(options.invite ? { invite_token: options.invite } : {}),
      ...(options.password ? { password: options.password } : {}),
    });
    if (typeof joined.participant_token === 'string')
      await rememberRoomToken(configFile, slug, joined.participant_token, base);
    print(json, joined, `✓ joined ${slug} as ${joined.participant_id}; token saved to ${configFile}`);
  });

room
  .command('read <slug>')
  .description('the room as an agent sees it')
  .option('--since <n>', 'only what changed since this cursor', Number)
  .action(async (slug: string, options: { since?: number }, command: Command) => {
    const { client, json } = await context(command, slug);
    const view = await client.getRoom({ slug, ...(options.since !== undefined ? { since: options.since } : {}) });
    print(
      json,
      view,
      'state' in view && typeof view.state === 'string'
        ? `${view.state}\n${JSON.stringify(masked(view), null, 2)}`
        : JSON.stringify(masked(view), null, 2),
    );
  });

function act(
  name: string,
  description: string,
  build: (args: string[], options: Record<string, string | undefined>) => Record<string, unknown>,
  configure: (command: Command) => Command = (command) => command,
) {
  configure(room.command(name).description(description).option('--decision <seq>', 'target this decision')).action(
    async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const options = args.at(-2) as Record<string, string | undefined>;
      const positional = args.slice(0, -2) as string[];
      const slug = positional[0]!;
      const { client, json } = await context(command, slug);
      const verb = name.split(' ')[0]!;
      const method = ACTIONS[verb]!;
      const result = await method(client, {
        slug,
        ...build(positional.slice(1), options),
        ...(options.decision ? { decision: Number(options.decision) } : {}),
      });
      print(json, result, `✓ ${verb} ${slug}: ${summary(result)}`);
    },
  );
}

// biome-ignore lint/suspicious/noExplicitAny: each action's input is built from its own flags above
const ACTIONS: Record<string, (client: ConclaveClient, input: any) => Promise<Body>> = {
  discuss: (c, i) => c.discuss(i),
  propose: (c, i) => c.propose(i),
  choose: (c, i) => c.choose(i),
  abstain: (c, i) => c.abstain(i),
  close: (c, i) => c.closeRoom(i),
  invite: (c, i) => c.createInvite(i),
};

act('discuss <slug> <text>', 'post to the discussion', ([text]) => ({ body: text }));
act('propose <slug> <option>', 'propose an option', ([option]) => ({ option }));
act(
  'choose <slug> <choice>',
  'choose an option (a JSON ballot for ranked, score or approval decisions)',
  ([choice], options) => ({
    choice: choice!.startsWith('{') || choice!.startsWith('[') ? parseJson(choice!, 'choice') : choice,
    ...(options.reason ? { reason: options.reason } : {}),
  }),
  (c) => c.option('--reason <text>', 'why (shown to the room)'),
);
act(
  'abstain <slug>',
  'abstain on a decision',
  (_args, options) => ({ reason: options.reason ?? 'abstaining' }),
  (c) => c.option('--reason <text>', 'why'),
);
act(
  'close <slug>',
  'close the room',
  (_args, options) => (options.statement ? { statement: options.statement } : {}),
  (c) => c.option('--statement <text>', 'a closing statement'),
);
act(
  'invite <slug>',
  'create an invite',
  (_args, options) => ({ label: options.label ?? 'invite' }),
  (c) => c.option('--label <text>', 'what the invite is for'),
);

room
  .command('outcome <slug>')
  .description('the decided list with winners, tallies and receipts')
  .action(async (slug: string, _options: unknown, command: Command) => {
    const { client, json } = await context(command, slug);
    const outcome = await client.outcome({ slug });
    const lines = (outcome.decisions as Body[]).map(
      (d) =>
        `#${d.seq} ${d.question} → ${d.resolved_winner ?? d.status}${d.receipt_hash ? `  (${d.receipt_hash.slice(0, 19)}…)` : ''}`,
    );
    print(json, outcome, [`${slug}: ${outcome.status}`, ...lines].join('\n'));
  });

room
  .command('delete <slug>')
  .description('delete a room for good (operator)')
  .action(async (slug: string, _options: unknown, command: Command) => {
    const { client, json } = await context(command, slug);
    const deleted = await client.deleteRoom({ slug });
    print(json, deleted, `✓ room ${slug} deleted`);
  });

// --- engagement ------------------------------------------------------------------------------

program
  .command('wait <slug>')
  .description('wait until something is owed to you (long-poll), showing the time waited')
  .option('--for <mode>', 'my_choice (default), completion or activity')
  .option('--timeout <seconds>', 'give up after this long', Number)
  .action(async (slug: string, options: { for?: string; timeout?: number }, command: Command) => {
    const { client, json } = await context(command, slug);
    const started = Date.now();
    const spinner = process.stderr.isTTY ? setInterval(() => tick(started), 250) : null;
    try {
      for (;;) {
        const left = options.timeout === undefined ? 30 : Math.ceil(options.timeout - (Date.now() - started) / 1000);
        if (left <= 0) throw new Exit(EXIT.failed, `nothing owed within ${options.timeout} s`);
        const answer = await client.awaitNextAction({
          slug,
          wait: Math.min(30, left),
          ...(options.for ? { for: options.for } : {}),
        } as never);
        if (answer.status !== 'timeout') {
          if (spinner) process.stderr.write('\r\x1b[K');
          print(
            json,
            answer,
            `✓ ${answer.status}: ${answer.decision ? `#${answer.decision.seq} ${answer.decision.question}` : JSON.stringify(answer.event ?? {})}`,
          );
          return;
        }
      }
    } finally {
      if (spinner) clearInterval(spinner);
    }
  });

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
function tick(started: number): void {
  const seconds = Math.floor((Date.now() - started) / 1000);
  process.stderr.write(`\r${FRAMES[Math.floor(Date.now() / 250) % FRAMES.length]} waiting… ${seconds}s`);
}

program
  .command('events <slug>')
  .description("the room's events; --follow streams them as they happen (SSE)")
  .option('--follow', 'keep streaming')
  .option('--since <seq>', 'after this event seq', Number)
  .action(async (slug: string, options: { follow?: boolean; since?: number }, command: Command) => {
    const { client, json } = await context(command, slug);
    const show = (event: Body) =>
      console.log(
        json ? JSON.stringify(event) : `${event.seq}\t${event.occurred_at ?? ''}\t${event.event_type ?? event.type}`,
      );
    if (!options.follow) {
      const page = await client.listEvents({
        slug,
        ...(options.since !== undefined ? { since_seq: options.since } : {}),
      });
      for (const event of page.events as Body[]) show(event);
      return;
    }
    const controller = new AbortController();
    process.once('SIGINT', () => controller.abort());
    for await (const event of client.streamEvents({
      slug,
      signal: controller.signal,
      ...(options.since !== undefined ? { since_seq: options.since } : {}),
    })) {
      show(event.data);
    }
  });

// --- verification ----------------------------------------------------------------------------

program
  .command('verify [room]')
  .description("verify a room's receipts without trusting the server: every signature, hash, link and replay")
  .option('--file <outcome.json>', 'verify a saved /outcome body, offline')
  .option('--jwks <jwks.json>', 'the keys to verify against (with --file)')
  .action(async (target: string | undefined, options: { file?: string; jwks?: string }, command: Command) => {
    const json = command.optsWithGlobals<GlobalOptions>().json === true;
    let outcome: unknown;
    let jwks: Jwks | undefined;
    let source: string;
    if (options.file) {
      outcome = parseJson(await readFile(options.file, 'utf8'), options.file);
      if (options.jwks) jwks = parseJson(await readFile(options.jwks, 'utf8'), options.jwks) as Jwks;
      source = options.file;
    } else {
      if (!target) throw new Exit(EXIT.usage, 'name a room (its URL or slug) or give --file');
      const { slug, base } = roomTarget(target, command.optsWithGlobals<GlobalOptions>().base);
      const { client } = await context(command, slug);
      const remote = base ? new ConclaveClient({ baseUrl: base, ...authOf(client) }) : client;
      outcome = await remote.outcome({ slug });
      jwks = (await remote.jwks()) as Jwks;
      source = `${slug}`;
    }
    const report = await verifyRoomReceiptChain(outcome, jwks ? { jwks } : {});
    console.log(json ? JSON.stringify(report, null, 2) : formatChainReport(report, source));
    if (!report.ok) throw new Exit(EXIT.failed, '');
  });

/** A room URL (`…/r/{slug}`, `…/api/rooms/{slug}…`) or a bare slug. */
function roomTarget(target: string, base: string | undefined): { slug: string; base: string | undefined } {
  if (!/^https?:\/\//.test(target)) return { slug: target, base };
  const url = new URL(target);
  const match = /^(.*?)\/(?:r|api\/rooms)\/([^/?#]+)/.exec(url.pathname);
  if (!match) throw new Exit(EXIT.usage, `not a room URL: ${target}`);
  return { slug: decodeURIComponent(match[2]!), base: base ?? `${url.origin}${match[1]}` };
}

function authOf(client: ConclaveClient): { token?: string } {
  const token = (client as unknown as { transport: { options: { defaultAuth: { token?: string } } } }).transport.options
    .defaultAuth.token;
  return token ? { token } : {};
}

// --- running ---------------------------------------------------------------------------------

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Exit(EXIT.usage, `${what} is not valid JSON`);
  }
}

function summary(body: Body): string {
  if (typeof body.status === 'string') return body.status;
  if (typeof body.id === 'string') return body.id;
  return 'done';
}

async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof Exit) {
      if (error.message) console.error(`✗ ${error.message}`);
      return error.code;
    }
    if (error instanceof ConclaveError) {
      console.error(
        `✗ ${error.code} (${error.status}): ${error.message}${error.hint ? `\n  hint: ${error.hint}` : ''}`,
      );
      return EXIT.refused;
    }
    if (error instanceof ConclaveNetworkError) {
      console.error(`✗ ${error.message}`);
      return EXIT.unreachable;
    }
    console.error(`✗ ${(error as Error).message ?? error}`);
    return EXIT.failed;
  }
}

const code = await main(process.argv);
// `serve` keeps running; everything else ends with its code.
if (!process.argv.slice(2).includes('serve')) process.exit(code);
