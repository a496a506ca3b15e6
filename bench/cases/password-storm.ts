/**
 * A rightful password join while 32 clients guess as fast as they are answered (docs/architecture.md,
 * Guess throttling). The guess limits are opened wide so only the hashing queue stands between the
 * guessers and libuv's thread pool. Rows: one scrypt of the room-password parameters alone (the
 * floor), a rightful join with nobody guessing, and the same join during the storm; the ratio is the
 * storm's p50 over the quiet p50 (bar ≤ 2: the queue puts a client that has not been hashing at the
 * head of the line, so it waits one running hash at most). The rightful clients of the storm are
 * not those of the quiet row: each asks for its first hash.
 */
import { randomBytes, scrypt } from 'node:crypto';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startBenchService } from '../bench-service.js';
import { percentile } from '../../test/support/ledger.js';
import type { BenchCase, BenchRow } from '../table.js';

const GUESSERS = 32;
const JOINS = 15;
const PASSWORD = 'the right password';
const GUESSERS_CLIENT = fileURLToPath(new URL('../password-guessers.ts', import.meta.url));

async function post(base: string, path: string, body: unknown, address: string) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** One scrypt with the parameters new room passwords get (auth/secrets.ts), nothing else. */
async function scryptFloor(): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < JOINS; i++) {
    const start = performance.now();
    await new Promise<void>((resolve, reject) =>
      scrypt(PASSWORD, randomBytes(16), 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 2 ** 26 }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    times.push(performance.now() - start);
  }
  return times;
}

export const passwordStorm: BenchCase = {
  id: 'password-storm',
  async run() {
    const { service, base, dataDir } = await startBenchService({
      TRUST_PROXY: '127.0.0.1',
      GUESS_LIMIT_PER_MIN: '1000000',
    });
    try {
      const room = async () =>
        (await post(base, '/api/rooms', { question: 'Which?', options: ['a', 'b'], password: PASSWORD }, '192.0.2.1'))
          .body.slug as string;
      /** Rightful joins, each into a room whose password this process has not verified yet (so it hashes). */
      const rightfulJoins = async (
        slugs: string[],
        firstHost: number,
      ): Promise<{ times: number[]; refused: number }> => {
        const times: number[] = [];
        let refused = 0;
        for (const [i, slug] of slugs.entries()) {
          const start = performance.now();
          const join = await post(
            base,
            `/api/rooms/${slug}/join`,
            { password: PASSWORD },
            `203.0.113.${firstHost + i}`,
          );
          times.push(performance.now() - start);
          if (join.status !== 200) refused++;
        }
        return { times, refused };
      };
      // Every room made first, one at a time: a creation hashes its password too, and one client
      // holds two places in the queue at most.
      const rooms = async (count: number) => {
        const slugs: string[] = [];
        for (let i = 0; i < count; i++) slugs.push(await room());
        return slugs;
      };
      const quietRooms = await rooms(JOINS);
      const stormRooms = await rooms(JOINS);
      const guessRooms = await rooms(GUESSERS);

      const floor = await scryptFloor();
      const quiet = await rightfulJoins(quietRooms, 1);

      // At the lowest CPU priority: an attacker's own CPU is not the service's machine's, and here both
      // share two cores.
      const guessers = spawn('nice', ['-n', '19', process.execPath, '--import', 'tsx', GUESSERS_CLIENT], {
        env: { ...process.env, GUESS_BASE: base, GUESS_ROOMS: JSON.stringify(guessRooms) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const report = (key: string) =>
        new Promise<Record<string, any>>((resolve, reject) => {
          guessers.on('message', (message: Record<string, any>) => {
            if (key in message) resolve(message);
          });
          guessers.once('exit', (code) => reject(new Error(`the guessers exited with ${code}`)));
        });
      await report('warm');
      const stormed = await rightfulJoins(stormRooms, 101);
      const tally = report('answers');
      guessers.send({ stop: true });
      const answers = Object.entries((await tally).answers as Record<string, number>);

      const quietP50 = percentile(quiet.times, 50);
      const rows: BenchRow[] = [
        {
          case: 'password: one scrypt (floor)',
          p50: percentile(floor, 50),
          p99: percentile(floor, 99),
          note: `N=2^15 r=8, ${JOINS} hashes, nothing else`,
        },
        {
          case: 'password: rightful join, quiet',
          p50: quietP50,
          p99: percentile(quiet.times, 99),
          errors: quiet.refused,
          note: `${JOINS} joins, each a fresh room (one hash each)`,
        },
        {
          case: `password: rightful join, ${GUESSERS} guessers`,
          p50: percentile(stormed.times, 50),
          p99: percentile(stormed.times, 99),
          ratio: percentile(stormed.times, 50) / quietP50,
          errors: stormed.refused,
          note: `ratio = p50 / quiet p50 (bar ≤ 2); guessers' answers: ${answers.map(([kind, n]) => `${n} ${kind}`).join(', ')}`,
        },
      ];
      return rows;
    } finally {
      await service.app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
