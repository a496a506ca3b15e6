/**
 * A whole room from the command line, run as a child process against a real service: `room create`
 * with the mechanism and the common settings as flags, `discuss --stance`, `room read` as text by
 * default (JSON with --json), `propose` showing the slate, `choose` printing the result when it seals,
 * and `wait --for completion` blocking until the next sealing after the decisions already seen (or
 * after `--since n`, and with several decisions open at once), exiting 7 once the room is closed.
 * docs/cli.md, Rooms and Waiting.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually } from '../support/engagement.js';
import { type RunningService, startService } from '../support/service.js';
import { type Run, runCli } from './run-cli.js';

const T0 = Date.parse('2026-06-01T09:00:00.000Z');

describe('the command line for a whole room', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]): Promise<Run> => runCli(env, ...args);
  const ok = async (...args: string[]): Promise<string> => {
    const run = await cli(...args);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run.stdout;
  };
  const parked = () => svc.service.engagement.waiters.parked;

  /** A room whose decisions seal as soon as its two seats (creator and a joined participant) have chosen. */
  async function twoSeatRoom(question: string, ...flags: string[]): Promise<string> {
    const out = await ok('--json', 'room', 'create', '-q', question, '-o', 'alpha', 'beta', '--early-close', ...flags);
    const slug = JSON.parse(out).slug as string;
    await ok('room', 'join', slug, '--name', 'second');
    return slug;
  }
  /** Both seats choose `option` on the open decision: it seals. */
  async function seal(slug: string, option: string): Promise<void> {
    await ok('room', 'choose', slug, option);
    await ok('--as', 'creator', 'room', 'choose', slug, option);
  }

  beforeAll(async () => {
    svc = await startService({ clock });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-room-cli-'));
    env = {
      ...process.env,
      CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'),
      CONCLAVE_URL: svc.base,
      LOG_LEVEL: 'silent',
    };
  });
  afterAll(async () => {
    await svc?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a room with the mechanism and the common settings as flags', async () => {
    const created = JSON.parse(
      await ok(
        '--json',
        'room',
        'create',
        '-q',
        'Which regions?',
        '-o',
        'eu',
        'us',
        'ap',
        '--mechanism',
        'approval',
        '--visibility',
        'public',
        '--voting-window',
        '600',
        '--early-close',
        '--settle-window',
        '0',
        '--choice-visibility',
        'after_decided',
        '--quorum',
        '2',
        '--max-open-decisions',
        '2',
        '--persistent',
        '--no-creator-votes',
        '--config',
        '{"max_participants":8}',
      ),
    );
    expect(created.config).toMatchObject({
      mechanism: 'approval',
      visibility: 'public',
      voting_window: 600,
      early_close: true,
      settle_window: 0,
      choice_visibility: 'after_decided',
      quorum: 2,
      max_open_decisions: 2,
      type: 'persistent',
      creator_votes: false,
      max_participants: 8,
    });
    expect(created.creator_token).toBe('[saved]');

    const human = await ok('room', 'create', '-q', 'Lunch?', '-o', 'pizza', 'sushi', '--mechanism', 'plurality');
    expect(human).toContain('plurality');
    expect(human).toContain('decision #1: Lunch?');
    expect(human).toContain('2. sushi');

    const twice = await cli(
      'room',
      'create',
      '-q',
      'Twice?',
      '-o',
      'a',
      'b',
      '--mechanism',
      'approval',
      '--config',
      '{"mechanism":"plurality"}',
    );
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('mechanism');
    const unknown = await cli('room', 'create', '-q', 'Borda?', '-o', 'a', 'b', '--mechanism', 'borda');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('simple_majority');
  });

  it('posts with a stance, shows the slate after a proposal, and reads the room as text unless --json', async () => {
    const slug = await twoSeatRoom('Where do we meet?');
    expect(await ok('room', 'discuss', slug, 'Alpha is closer', '--stance', 'agree')).toContain('✓ discuss');
    expect((await cli('room', 'discuss', slug, 'hm', '--stance', 'meh')).code).toBe(2);

    const proposed = await ok('room', 'propose', slug, 'gamma');
    expect(proposed).toContain('added to decision #1');
    expect(proposed).toMatch(/3\. gamma/);
    expect(proposed).not.toContain('done');
    expect(await ok('room', 'propose', slug, 'gamma')).toContain('not added to decision #1');

    const text = await ok('room', 'read', slug);
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toContain('Deciding now');
    expect(text).toMatch(/#1 Where do we meet\?/);
    expect(text).toMatch(/1\. alpha/);
    expect(text).toMatch(/second \[agree\].*Alpha is closer/);
    expect(text).toContain('to choose: choose with a single option');

    const view = JSON.parse(await ok('--json', 'room', 'read', slug));
    expect(view.discussion[0]).toMatchObject({ said: 'Alpha is closer', stance: 'agree' });
  });

  it('choose prints the winner when its ballot seals the decision, and --wait prints it when it seals later', async () => {
    const slug = await twoSeatRoom('Tea or coffee?', '--settle-window', '0');
    const first = await ok('room', 'choose', slug, 'alpha');
    expect(first).toContain('chose alpha on decision #1; still open');
    const sealing = await ok('--as', 'creator', 'room', 'choose', slug, 'alpha');
    expect(sealing).toContain('it sealed → alpha');

    const later = await twoSeatRoom('Now or later?', '--settle-window', '0');
    const waiting = cli('room', 'choose', later, 'beta', '--wait');
    await eventually(() => parked() === 1, 20_000);
    await ok('--as', 'creator', 'room', 'choose', later, 'beta');
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain('chose beta on decision #1');
    expect(waited.stdout).toContain('✓ decision #1 sealed: Now or later? → beta');
  });

  it('wait --for completion blocks until the next sealing after the decisions it has seen', async () => {
    const slug = await twoSeatRoom('First?', '--settle-window', '0', '--persistent');
    await seal(slug, 'alpha');
    await ok('room', 'ask', slug, 'Second?', '-o', 'red', 'blue');
    await seal(slug, 'red');
    await ok('room', 'ask', slug, 'Third?', '-o', 'up', 'down');

    // Decisions 1 and 2 sealed long ago and 3 is open: nothing new has sealed, so the wait runs out.
    const blocked = await cli('wait', slug, '--for', 'completion', '--timeout', '2');
    expect(blocked.code, blocked.stdout).toBe(5);
    expect(blocked.stdout).toBe('');
    // --since names what was seen: after decision 1, the next sealing is decision 2's.
    const since = await ok('wait', slug, '--for', 'completion', '--since', '1');
    expect(since).toContain('✓ decision #2 sealed: Second? → red');
    expect(since).toContain(`next: conclave wait ${slug} --for completion --since 2`);

    const waiting = cli('--json', 'wait', slug, '--for', 'completion', '--timeout', '25');
    await eventually(() => parked() === 1, 20_000);
    await seal(slug, 'down');
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      status: 'actionable',
      for: 'completion',
      decision: { seq: 3, resolved_winner: 'down' },
    });

    // A closed room seals nothing again: the wait says so and exits 7 instead of waiting.
    await ok('room', 'close', slug);
    const closed = await cli('wait', slug, '--for', 'completion', '--since', '3');
    expect(closed.code).toBe(7);
    expect(closed.stdout).toContain('is closed');
  });

  it('wait --for completion also waits on an open decision below one already sealed (several open at once)', async () => {
    const slug = await twoSeatRoom('Older?', '--settle-window', '0', '--max-open-decisions', '2');
    await ok('room', 'ask', slug, 'Newer?', '-o', 'red', 'blue');
    await ok('room', 'choose', slug, 'red', '--decision', '2');
    await ok('--as', 'creator', 'room', 'choose', slug, 'red', '--decision', '2');
    // Decision 2 sealed before the wait started; decision 1 is still open and is the one to wait for.
    const waiting = cli('wait', slug, '--for', 'completion', '--timeout', '40');
    await eventually(() => parked() === 1, 20_000);
    await ok('room', 'choose', slug, 'beta', '--decision', '1');
    await ok('--as', 'creator', 'room', 'choose', slug, 'beta', '--decision', '1');
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain('✓ decision #1 sealed: Older? → beta');
  });
});
