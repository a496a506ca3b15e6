/**
 * `conclave wait`: long-polls until something is owed to you, showing the time waited (docs/cli.md,
 * Waiting). `--for completion` waits for the next decision to seal after the ones already seen:
 * those sealed when the wait starts, or with `--since n` decisions 1..n. Running out of --timeout
 * exits 5 (timed out), never 1 (which means a verification failed); a closed room, where nothing will
 * seal again, exits 7.
 */
import type { Command } from 'commander';
import type { Body, ConclaveClient } from '../client/index.js';
import { context, count, EXIT, Exit, positiveNumber, print } from './shell.js';
import { tallyLine } from './tallies.js';

/** The longest single long-poll the command asks for; it asks again until --timeout. */
const POLL_SECONDS = 30;
/** With a decision already seen sealed above one still open, the service cannot wait on the open one alone. */
const GAP_POLL_SECONDS = 5;

export function registerWaitCommand(program: Command): void {
  program
    .command('wait <slug>')
    .description(
      'wait until something is owed to you (long-poll), showing the time waited; --for completion waits for the next decision to seal; exits 5 on --timeout, 7 when the room is closed',
    )
    .option('--for <mode>', 'my_choice (default), completion or activity')
    .option(
      '--since <n>',
      'completion: the decisions 1..n count as seen (default: those sealed when the wait starts); activity: after this event seq',
      count,
    )
    .option('--timeout <seconds>', 'give up after this long (exit 5)', positiveNumber)
    .action(async (slug: string, options: { for?: string; since?: number; timeout?: number }, command: Command) => {
      const { client, json } = await context(command, slug);
      const deadline = options.timeout === undefined ? null : Date.now() + options.timeout * 1000;
      const mode = options.for ?? 'my_choice';
      const stop = spin();
      try {
        if (mode === 'completion') {
          const seen = options.since;
          const isSeen = seen === undefined ? null : (seq: number) => seq <= seen;
          const sealing = await nextSealing(client, slug, isSeen, deadline, options.timeout);
          stop();
          printSealing(json, slug, sealing);
          return;
        }
        for (;;) {
          const wait = pollSeconds(deadline, `nothing owed within ${options.timeout} s`);
          const asked = Date.now();
          const answer: Body = await client.awaitNextAction({
            slug,
            wait,
            for: mode,
            ...(options.since !== undefined ? { since_seq: options.since } : {}),
          } as never);
          // A timeout long before the wait asked for: nothing here can need you (docs/agents.md, The
          // REST loop). Asking again would answer the same at once, so say why and stop.
          if (answer.status === 'timeout' && wait >= 2 && Date.now() - asked < (wait * 1000) / 2) {
            stop();
            throw new Exit(EXIT.timeout, String(answer.hint));
          }
          if (answer.status === 'timeout') continue;
          stop();
          print(json, answer, describeAnswer(slug, answer));
          return;
        }
      } finally {
        stop();
      }
    });
}

/** Seconds to wait in the next long-poll, or the timeout exit once --timeout has passed. */
function pollSeconds(deadline: number | null, timedOut: string, most = POLL_SECONDS): number {
  if (deadline === null) return most;
  const left = Math.ceil((deadline - Date.now()) / 1000);
  if (left <= 0) throw new Exit(EXIT.timeout, timedOut);
  return Math.min(most, left);
}

export type Sealing = { decision: Body; outcome: Body } | { concluded: Body };

/**
 * The lowest decision sealed that `seen` does not cover (null: the decisions sealed now), long-polling
 * `for=completion` in between. The service wakes for the lowest decision sealed above a watermark;
 * when one already seen sealed above one still open (several decisions open at once), it cannot wait
 * on the open one alone, so the polls are short then.
 */
export async function nextSealing(
  client: ConclaveClient,
  slug: string,
  seen: ((seq: number) => boolean) | null,
  deadline: number | null,
  timeout?: number,
): Promise<Sealing> {
  let isSeen = seen;
  for (;;) {
    const outcome: Body = await client.outcome({ slug });
    const decisions = outcome.decisions as Body[];
    const sealed = (d: Body) => d.receipt_hash !== null && d.receipt_hash !== undefined;
    if (isSeen === null) {
      const before = new Set(decisions.filter(sealed).map((d) => d.seq as number));
      isSeen = (seq) => before.has(seq);
    }
    const fresh = decisions.find((d) => sealed(d) && !isSeen?.(d.seq as number));
    if (fresh) return { decision: fresh, outcome };
    const open = decisions.filter((d) => !sealed(d)).map((d) => d.seq as number);
    if (outcome.status === 'concluded' && open.length === 0) return { concluded: outcome };
    const lowestOpen = open.length > 0 ? Math.min(...open) : Number.POSITIVE_INFINITY;
    const highest = decisions.reduce((most, d) => Math.max(most, d.seq as number), 0);
    const gap = decisions.some((d) => sealed(d) && (d.seq as number) > lowestOpen);
    await client.awaitNextAction({
      slug,
      for: 'completion',
      since_seq: gap || open.length === 0 ? highest : lowestOpen - 1,
      wait: pollSeconds(deadline, `no decision sealed within ${timeout} s`, gap ? GAP_POLL_SECONDS : POLL_SECONDS),
    } as never);
  }
}

export function printSealing(json: boolean, slug: string, sealing: Sealing): void {
  if ('concluded' in sealing) {
    const hint = `room ${slug} is closed: no decision will seal again (\`conclave room outcome ${slug}\` shows what was decided)`;
    print(json, { status: 'concluded', slug, hint }, `✗ ${hint}`);
    throw new Exit(EXIT.concluded, '');
  }
  const { decision } = sealing;
  print(
    json,
    { status: 'actionable', for: 'completion', decision },
    [
      `✓ decision #${decision.seq} sealed: ${decision.question} → ${verdict(decision)}`,
      ...indented(tallyLine(decision.receipt_jws)),
      `   receipt ${decision.receipt_hash}`,
      `   next: conclave wait ${slug} --for completion --since ${decision.seq}`,
    ].join('\n'),
  );
}

/** The winner, or why there is none. */
export function verdict(decision: Body): string {
  const outcome = decision.outcome_status ?? decision.resolved_outcome ?? decision.status;
  return decision.resolved_winner ? `${decision.resolved_winner} (${outcome})` : `no winner (${outcome})`;
}

function indented(line: string | null): string[] {
  return line ? [`   ${line}`] : [];
}

/** A long-poll's answer as a line to act on. */
function describeAnswer(slug: string, answer: Body): string {
  const decision = answer.decision as Body | undefined;
  if (answer.status === 'actionable' && decision) {
    if (decision.status === 'resolved') {
      return `✓ decision #${decision.seq} you opened sealed: ${decision.question} → ${verdict(decision)}`;
    }
    const options = ((decision.options as string[]) ?? []).map((o, i) => `${i + 1}. ${o}`).join('  ');
    const others = (answer.also_actionable as Body[] | undefined)?.map((d) => `#${d.seq}`) ?? [];
    return [
      `✓ decision #${decision.seq} needs your choice: ${decision.question}`,
      `   options: ${options}`,
      `   closes ${decision.voting_ends_at}`,
      ...(others.length > 0 ? [`   also owed: ${others.join(', ')}`] : []),
      `   next: conclave room choose ${slug} <number or text> --decision ${decision.seq}`,
    ].join('\n');
  }
  const event = answer.event as Body | undefined;
  if (answer.status === 'activity' && event) {
    return `✓ activity at event ${event.seq}: ${event.type}${event.who ? ` by ${event.who}` : ''}\n   next: conclave room read ${slug} --since ${event.seq - 1}`;
  }
  return `✓ ${answer.status}${typeof answer.hint === 'string' ? `: ${answer.hint}` : ''}`;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The time waited on a terminal; returns what clears it (safe to call more than once). */
function spin(): () => void {
  if (!process.stderr.isTTY) return () => {};
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    process.stderr.write(`\r${FRAMES[Math.floor(Date.now() / 250) % FRAMES.length]} waiting… ${seconds}s`);
  }, 250);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    process.stderr.write('\r\x1b[K');
  };
}
