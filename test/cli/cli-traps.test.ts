/**
 * The command line's traps, each as a shell user meets it: a join that threw away the creator token,
 * a credentials file from the older format, no --version, no ask / start-choosing / rooms list /
 * whoami, a wait timeout indistinguishable from a failed verification, a malformed --base reported as
 * "unreachable", `keys list` creating a signing key, `room outcome` without tallies, and auth errors
 * telling a shell user to send HTTP headers. Each test fails on the code before the fix.
 */
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { type RunningService, startService } from '../support/service.js';
import { repoRoot, runCli } from './run-cli.js';

const FIXTURE = path.join(repoRoot, 'test/fixtures/cli-config-v1');
/** The fixture's rooms were made at this time (see its README); the clock starts there. */
const FIXTURE_TIME = Date.parse('2026-11-25T11:46:00.000Z');

describe('command-line traps', () => {
  const clock = new ManualClock(FIXTURE_TIME);
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(env, ...args);
  const saved = async () => JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8'));
  const create = async (question: string, ...options: string[]) => {
    const config = '{"max_open_decisions":2}';
    const run = await cli('--json', 'room', 'create', '-q', question, '--config', config, '-o', ...options);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout).slug as string;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-cli-traps-'));
    // The fixture's data directory, so that the tokens of its old-format credentials file are live.
    await cp(path.join(FIXTURE, 'store'), path.join(dir, 'data'), { recursive: true });
    svc = await startService({ clock, dataDir: path.join(dir, 'data') });
    env = {
      ...process.env,
      CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'),
      CONCLAVE_URL: svc.base,
      DATA_DIR: path.join(dir, 'no-such-data-dir'),
      LOG_LEVEL: 'silent',
    };
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the creator token when the creator joins their own room, and acts as creator with it', async () => {
    const slug = await create('Keep my creator token?', 'yes', 'no');
    const creatorToken = (await saved()).rooms[slug].creator.token;
    const joined = await cli('room', 'join', slug, '--name', 'second-seat');
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stdout).toContain('your creator token is kept');
    const room = (await saved()).rooms[slug];
    expect(room.creator.token).toBe(creatorToken);
    expect(room.participant.token).toMatch(/^t_/);
    expect(room.participant.token).not.toBe(creatorToken);
    // Host actions use the creator token, without --token.
    expect((await cli('room', 'invite', slug, '--label', 'a friend')).code).toBe(0);
    // A second join does not silently replace the participant token either.
    const again = await cli('room', 'join', slug);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('--replace');
    expect((await saved()).rooms[slug].participant.token).toBe(room.participant.token);
  });

  it('reads a credentials file written by the older code, and migrates it on the next save', async () => {
    await cp(path.join(FIXTURE, 'config.json'), env.CONCLAVE_CONFIG!);
    const before = JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8'));
    const who = await cli('--json', 'whoami');
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout).seats.map((s: { slug: string; role: string }) => `${s.slug}:${s.role}`)).toEqual([
      'wrzjwt8wbs:earlier',
      'wjfwhdabqc:earlier',
    ]);
    for (const room of Object.values(before.rooms) as { token: string }[]) expect(who.stdout).not.toContain(room.token);
    // The old file's token of wrzjwt8wbs is its creator token: joining keeps it and adds a seat.
    const joined = await cli('--base', svc.base, 'room', 'join', 'wrzjwt8wbs', '--name', 'later');
    expect(joined.code, joined.stderr).toBe(0);
    const after = await saved();
    expect(after.version).toBe(2);
    expect(after.rooms.wrzjwt8wbs.earlier.token).toBe(before.rooms.wrzjwt8wbs.token);
    expect(after.rooms.wrzjwt8wbs.participant.token).toMatch(/^t_/);
    expect(after.rooms.wjfwhdabqc.earlier.token).toBe(before.rooms.wjfwhdabqc.token);
    expect((await stat(env.CONCLAVE_CONFIG!)).mode & 0o777).toBe(0o600);
    // Host actions fall back to the earlier token of unknown role: still the creator's, so this works.
    const invite = await cli('--base', svc.base, 'room', 'invite', 'wrzjwt8wbs');
    expect(invite.code, invite.stderr).toBe(0);
    // Member actions use the new participant seat.
    expect((await cli('--base', svc.base, 'room', 'discuss', 'wrzjwt8wbs', 'hello from the new seat')).code).toBe(0);
    const listed = await cli('--json', '--base', svc.base, 'rooms', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout).rooms;
    expect(rows.find((r: { slug: string }) => r.slug === 'wrzjwt8wbs')).toMatchObject({
      roles: ['participant', 'earlier'],
      status: 'voting',
    });
  });

  it('prints its version', async () => {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    const run = await cli('--version');
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
    // The exit codes are part of the help.
    const help = await cli('--help');
    expect(help.stdout).toMatch(/Exit codes:[\s\S]*5 {2}timed out[\s\S]*6 {2}a local problem/);
  });

  it('asks a second decision, starts choosing on it, and shows tallies in the outcome', async () => {
    const slug = await create('First question?', 'pizza', 'sushi');
    const asked = await cli('room', 'ask', slug, 'Second question?', '-o', 'tea', 'coffee', '--proposal-window', '600');
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('decision #2 opened');
    const started = await cli('room', 'start-choosing', slug, '--decision', '2');
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain('decision #2 is open for choices');
    expect((await cli('room', 'choose', slug, 'pizza', '--decision', '1')).code).toBe(0);
    expect((await cli('room', 'choose', slug, 'coffee', '--decision', '2')).code).toBe(0);
    clock.advance(2 * 86_400_000);
    await svc.service.scheduler.runDue();
    const outcome = await cli('room', 'outcome', slug);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/#1 First question\? → pizza.*\n\s+tallies: pizza 1 · sushi 0 — 1 of 1 chose/);
    expect(outcome.stdout).toMatch(/#2 Second question\? → coffee.*\n\s+tallies: coffee 1 · tea 0/);
  });

  it('exits 5 when wait times out, distinct from 1 (verification failed)', async () => {
    const slug = await create('Nothing owed?', 'a', 'b');
    expect((await cli('room', 'choose', slug, 'a')).code).toBe(0);
    const waited = await cli('wait', slug, '--timeout', '1');
    expect(waited.code).toBe(5);
    expect(waited.stderr).toContain('nothing owed within 1 s');
  });

  it('exits 2 for a malformed service URL or a malformed number, not 4', async () => {
    const flag = await cli('--base', 'notaurl', 'room', 'read', 'abc');
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--base "notaurl" is not a service URL');
    const fromEnv = await runCli({ ...env, CONCLAVE_URL: 'ftp://example' }, 'room', 'read', 'abc');
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('CONCLAVE_URL');
    expect((await cli('wait', 'abc', '--timeout', 'soon')).code).toBe(2);
    expect((await cli('--base', 'http://127.0.0.1:9', 'room', 'read', 'abc')).code).toBe(4);
  });

  it('lists signing keys without creating one', async () => {
    const listed = await cli('--json', 'keys', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ keys: [] });
    expect(existsSync(env.DATA_DIR!)).toBe(false);
  });

  it('phrases auth errors for the shell: join or pass --token, never HTTP headers', async () => {
    const slug = await create('Who may talk?', 'a', 'b');
    const stranger = { ...env, CONCLAVE_CONFIG: path.join(dir, 'stranger.json') };
    const run = await runCli(stranger, 'room', 'discuss', slug, 'hello');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('auth.required');
    expect(run.stderr).toContain(`run \`conclave room join ${slug}\``);
    expect(run.stderr).toContain('--token');
    expect(run.stderr).not.toMatch(/Authorization|Bearer|X-Mandate/);
    const wrong = await runCli(
      { ...stranger, CONCLAVE_TOKEN: 't_not-a-real-token-000000000000000000000000' },
      'room',
      'discuss',
      slug,
      'hi',
    );
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('auth.invalid_token');
    expect(wrong.stderr).toContain(`conclave room join ${slug}`);
    expect(wrong.stderr).not.toMatch(/Authorization|Bearer|POST \/api/);
  });
});
