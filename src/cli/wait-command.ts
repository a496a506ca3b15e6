/**
 * `conclave wait`: long-polls until something is owed to you, showing the time waited. Running out of
 * --timeout exits 5 (timed out), never 1 (which means a verification failed).
 */
import type { Command } from 'commander';
import { context, EXIT, Exit, positiveNumber, print } from './shell.js';

export function registerWaitCommand(program: Command): void {
  program
    .command('wait <slug>')
    .description('wait until something is owed to you (long-poll), showing the time waited; exits 5 on --timeout')
    .option('--for <mode>', 'my_choice (default), completion or activity')
    .option('--timeout <seconds>', 'give up after this long (exit 5)', positiveNumber)
    .action(async (slug: string, options: { for?: string; timeout?: number }, command: Command) => {
      const { client, json } = await context(command, slug);
      const started = Date.now();
      const spinner = process.stderr.isTTY ? setInterval(() => tick(started), 250) : null;
      try {
        for (;;) {
          const left = options.timeout === undefined ? 30 : Math.ceil(options.timeout - (Date.now() - started) / 1000);
          if (left <= 0) throw new Exit(EXIT.timeout, `nothing owed within ${options.timeout} s`);
          const asked = Date.now();
          const wait = Math.min(30, left);
          const answer = await client.awaitNextAction({
            slug,
            wait,
            ...(options.for ? { for: options.for } : {}),
          } as never);
          // A timeout long before the wait asked for: nothing here can need you (docs/agents.md, The
          // REST loop). Asking again would answer the same at once, so say why and stop.
          if (answer.status === 'timeout' && wait >= 2 && Date.now() - asked < (wait * 1000) / 2) {
            if (spinner) process.stderr.write('\r\x1b[K');
            throw new Exit(EXIT.timeout, answer.hint);
          }
          if (answer.status !== 'timeout') {
            if (spinner) process.stderr.write('\r\x1b[K');
            print(
              json,
              answer,
              `✓ ${answer.status}: ${'decision' in answer ? `#${answer.decision.seq} ${answer.decision.question}` : JSON.stringify(answer.event)}`,
            );
            return;
          }
        }
      } finally {
        if (spinner) clearInterval(spinner);
      }
    });
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
function tick(started: number): void {
  const seconds = Math.floor((Date.now() - started) / 1000);
  process.stderr.write(`\r${FRAMES[Math.floor(Date.now() / 250) % FRAMES.length]} waiting… ${seconds}s`);
}
