#!/usr/bin/env node
/**
 * `conclave`: run and inspect a server, take part in rooms from a shell, and verify a room's history
 * without trusting the server. Readable output by default, `--json` for scripts. This file registers
 * the commands; each family lives in its own module. Exit codes: EXIT in shell.ts (also in --help and
 * docs/cli.md).
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
import { configPath } from './credentials.js';
import { registerDataCommands } from './data-commands.js';
import { registerIdentityCommands } from './identity-commands.js';
import { registerKeyCommands } from './keys-commands.js';
import { LogCheckFailed, registerLogCommands, verifyRoomInLog } from './log.js';
import { formatChainReport } from './report.js';
import { registerRoomCommands } from './room-commands.js';
import {
  context,
  EXIT,
  EXIT_CODES_HELP,
  Exit,
  type GlobalOptions,
  lastActing,
  parseJson,
  refusalMessage,
} from './shell.js';
import { packageVersion } from './version.js';
import { fileRoom, onlineRoom, type RoomOptions } from './verify-room.js';
import { registerWaitCommand } from './wait-command.js';

const program = new Command()
  .name('conclave')
  .description('Conclave: deliberation rooms with signed, hash-chained receipts.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .addOption(new Option('--base <url>', 'service base URL').env('CONCLAVE_URL'))
  .addOption(
    new Option('--token <token>', 'participant or operator token (prefer the env or the config file)').env(
      'CONCLAVE_TOKEN',
    ),
  )
  .addOption(new Option('--mandate <jws>', 'a mandate to act under').env('CONCLAVE_MANDATE'))
  .addOption(
    new Option('--as <role>', 'which saved token of the room to act with (default: by command)').choices([
      'creator',
      'participant',
    ]),
  )
  .option('--json', 'print JSON for scripts')
  .addHelpText('after', EXIT_CODES_HELP)
  .showHelpAfterError()
  .exitOverride();

// --- server ----------------------------------------------------------------------------------

program
  .command('serve')
  .description('run the service (what `npm start` runs), configured by the environment (see README)')
  .action(async () => {
    const { startServer } = await import('../start.js');
    await startServer();
  });

registerKeyCommands(program);
registerDataCommands(program);

// --- rooms -----------------------------------------------------------------------------------

registerRoomCommands(program);
registerIdentityCommands(program);

// --- engagement ------------------------------------------------------------------------------

registerWaitCommand(program);

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
  .option('--room <url>', 'the room the receipts must be signed for (needed with --file; online, the room named)')
  .option('--trust-file-room', 'with --file: hold the receipts to the room the file names for itself, and say so')
  .option('--no-signatures', 'check hashes, links and replay only, and say so: nothing then proves who signed')
  .option('--log-wait <seconds>', 'how long to wait for receipts to enter the transparency log', '10')
  .action(async (target: string | undefined, options: VerifyOptions & { logWait: string }, command: Command) => {
    const json = command.optsWithGlobals<GlobalOptions>().json === true;
    let outcome: unknown;
    let jwks: Jwks | undefined;
    let source: string;
    let room: string;
    let inLog: (() => Promise<string[]>) | null = null;
    if (options.file) {
      // Fail closed: without keys nothing proves who signed, so skipping that takes an explicit flag.
      if (!options.jwks && options.signatures) throw new Exit(EXIT.usage, NO_JWKS);
      // Likewise without a room: receipts that verify prove nothing about which room they are.
      room = fileRoom(options);
      outcome = parseJson(await readFile(options.file, 'utf8'), options.file);
      if (options.jwks && options.signatures)
        jwks = parseJson(await readFile(options.jwks, 'utf8'), options.jwks) as Jwks;
      source = options.file;
    } else {
      if (!target) throw new Exit(EXIT.usage, 'name a room (its URL or slug) or give --file');
      const { slug, base } = roomTarget(target, command.optsWithGlobals<GlobalOptions>().base);
      const seated = await context(command, slug);
      const remote = base ? new ConclaveClient({ baseUrl: base, ...authOf(seated.client) }) : seated.client;
      outcome = await remote.outcome({ slug });
      if (options.signatures) jwks = (await remote.jwks()) as Jwks;
      source = `${slug}`;
      room = onlineRoom(options, base ?? seated.base, slug);
      const logBase = base ?? seated.base;
      inLog = () =>
        verifyRoomInLog({
          base: logBase,
          slug,
          auth: authOf(seated.client),
          configFile: configPath(),
          waitMs: Number(options.logWait) * 1000,
        });
    }
    const report = await verifyRoomReceiptChain(outcome, { ...(jwks ? { jwks } : {}), room });
    console.log(json ? JSON.stringify(report, null, 2) : formatChainReport(report, source));
    // The transparency log (cli/log.ts) is checked even when the chain failed: it names the leaf.
    const logFailure = inLog ? await checkLog(inLog, json) : null;
    // With --no-signatures the verdict says so, and the exit code follows what was checked.
    const held = options.signatures ? report.ok : report.chain_ok;
    if (!held || logFailure) throw new Exit(EXIT.verificationFailed, logFailure ?? '');
  });

interface VerifyOptions extends RoomOptions {
  file?: string;
  jwks?: string;
  /** False with --no-signatures. */
  signatures: boolean;
}

const NO_JWKS =
  'give --jwks <jwks.json> (the service keys, from GET /.well-known/jwks.json), or --no-signatures to check only hashes, links and replay';

async function checkLog(run: () => Promise<string[]>, json: boolean): Promise<string | null> {
  try {
    const lines = await run();
    if (!json) console.log(lines.map((line) => `✓ log: ${line}`).join('\n'));
    return null;
  } catch (error) {
    if (error instanceof LogCheckFailed) return `log: ${error.message}`;
    throw error;
  }
}

registerLogCommands(program, (command) => context(command));

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
      console.error(`✗ ${refusalMessage(error, lastActing())}`);
      return EXIT.refused;
    }
    if (error instanceof ConclaveNetworkError) {
      console.error(`✗ ${error.message}`);
      return error.kind === 'timeout' ? EXIT.timeout : EXIT.unreachable;
    }
    // The transparency log disagrees with itself or with what the service showed: a failed check.
    if (error instanceof LogCheckFailed) {
      console.error(`✗ log: ${error.message}`);
      return EXIT.verificationFailed;
    }
    console.error(`✗ ${(error as Error).message ?? error}`);
    return EXIT.local;
  }
}

const code = await main(process.argv);
// `serve` keeps running; everything else ends with its code.
if (!process.argv.slice(2).includes('serve')) process.exit(code);
