/**
 * The `conclave` command line, run as a child process against a real service: help, --json, the
 * credentials file (0600, tokens never printed), exit codes, events, wait, keys, and `verify` passing
 * on a genuine room and failing — naming the receipt and the reason — on each kind of forgery.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCompact } from '../../src/receipts/compact.js';
import { generateSigningKey, receiptHash, receiptHeader, signCompact } from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { freePort } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { type Run, repoRoot, runCli } from './run-cli.js';
import { BUILT_CLI } from '../support/built.js';

const ADMIN_TOKEN = 'cli-test-admin-token-0123456789abcdef0123';

describe('the conclave command line', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let slug: string;
  let outcomeFile: string;
  let jwksFile: string;

  const cli = (...args: string[]): Promise<Run> => runCli(env, ...args);
  const roomUrl = () => `${svc.base}/r/${slug}`;

  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN } });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-cli-'));
    env = {
      ...process.env,
      CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'),
      CONCLAVE_URL: svc.base,
      DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'silent',
      // `conclave serve` starts without the start-up warm-up (src/warm-up.ts): seconds the test does not need.
      WARMUP_TURNS: '0',
    };
    outcomeFile = path.join(dir, 'outcome.json');
    jwksFile = path.join(dir, 'jwks.json');
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints help and exits 0; a usage error exits 2', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const command of ['serve', 'keys', 'room', 'wait', 'events', 'verify']) expect(help.stdout).toContain(command);
    expect((await cli('room', '--help')).stdout).toContain('create');
    expect((await cli('no-such-command')).code).toBe(2);
  });

  it('creates a room with --json, keeping the token out of the output and in a 0600 file', async () => {
    const created = await cli(
      '--json',
      'room',
      'create',
      '-q',
      'Lunch?',
      '-o',
      'pizza',
      'sushi',
      '--config',
      '{"voting_window":60}',
    );
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout);
    slug = body.slug;
    expect(body.creator_token).toBe('[saved]');
    const file = env.CONCLAVE_CONFIG!;
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.rooms[slug].creator.token).toMatch(/^t_/);
    expect(created.stdout + created.stderr).not.toContain(saved.rooms[slug].creator.token);
  });

  it('acts in the room, reads it, and lists its events', async () => {
    const discussed = await cli('room', 'discuss', slug, 'Pizza is faster');
    expect(discussed.code).toBe(0);
    expect(discussed.stdout).toContain('✓ discuss');
    // The creator owes a choice: the wait answers at once.
    const waited = await cli('wait', slug, '--timeout', '10');
    expect(waited.code).toBe(0);
    expect(waited.stdout).toContain('✓ decision #1 needs your choice: Lunch?');
    expect((await cli('room', 'choose', slug, 'pizza', '--reason', 'it is quick')).code).toBe(0);
    const read = await cli('--json', 'room', 'read', slug);
    expect(JSON.parse(read.stdout).choices[0]).toMatchObject({ choice: 'pizza' });
    const events = await cli('events', slug);
    expect(events.code).toBe(0);
    expect(events.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    const token = JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8')).rooms[slug].creator.token;
    const full = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token });
    expect(JSON.stringify(full.body)).toContain('it is quick');
  });

  it('exits 3 with the error code when the service refuses, and 4 when it cannot be reached', async () => {
    const refused = await cli('room', 'choose', 'nosuchroom', 'pizza');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('room.not_found');
    const unreachable = await cli('--base', 'http://127.0.0.1:9', 'room', 'read', slug);
    expect(unreachable.code).toBe(4);
  });

  it('verifies a genuine room online and offline', async () => {
    clock.advance(61_000);
    await svc.service.scheduler.runDue();
    const online = await cli('verify', `${svc.base}/r/${slug}`);
    expect(online.stderr).toBe('');
    expect(online.code).toBe(0);
    // Nothing open can need a choice now: the wait says so at once instead of spinning to --timeout.
    const started = Date.now();
    const over = await cli('wait', slug, '--timeout', '20');
    expect(over.code).toBe(5);
    expect(over.stderr).toContain('Decision #1 sealed with your choice: "pizza" won.');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(online.stdout).toMatch(/✓ #1 decisions\[0\].*signature ✓ {2}hash ✓ {2}link ✓ {2}replay ✓/);
    const token = JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8')).rooms[slug].creator.token;
    await writeFile(
      outcomeFile,
      JSON.stringify((await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token })).body),
    );
    await writeFile(jwksFile, JSON.stringify((await call(svc.base, 'GET', '/.well-known/jwks.json')).body));
    const offline = await cli('verify', '--file', outcomeFile, '--room', roomUrl(), '--jwks', jwksFile);
    expect(offline.code).toBe(0);
  });

  it('refuses an offline verification without keys unless --no-signatures is given, and then says so', async () => {
    const keyless = await cli('verify', '--file', outcomeFile);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('--no-signatures');
    expect(keyless.stdout).not.toContain('✓');
    const unsigned = await cli('verify', '--file', outcomeFile, '--room', roomUrl(), '--no-signatures');
    expect(unsigned.code).toBe(0);
    expect(unsigned.stdout).toContain('signatures NOT checked');
    expect(unsigned.stdout).not.toMatch(/verified: every signature/);
    const json = JSON.parse(
      (await cli('--json', 'verify', '--file', outcomeFile, '--room', roomUrl(), '--no-signatures')).stdout,
    );
    expect(json).toMatchObject({ ok: false, signatures_checked: false, chain_ok: true });
    // Skipping signatures skips only them: a broken link still fails.
    const outcome = JSON.parse(await readFile(outcomeFile, 'utf8'));
    const broken = `${outcomeFile}.broken.json`;
    await writeFile(
      broken,
      JSON.stringify({ ...outcome, decisions: [{ ...outcome.decisions[0], prev_hash: `sha256:${'0'.repeat(64)}` }] }),
    );
    const failed = await cli('verify', '--file', broken, '--room', roomUrl(), '--no-signatures');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('verification FAILED');
  });

  it('fails verification, naming the receipt and the reason, for each forgery', async () => {
    const outcome = JSON.parse(await readFile(outcomeFile, 'utf8'));
    const jwks = JSON.parse(await readFile(jwksFile, 'utf8'));
    const row = outcome.decisions[0];
    const forger = generateSigningKey();
    const payload: any = decodeCompact(row.receipt_jws).payload;
    payload.svc.outcome.winning_option = 'sushi';
    const forged = signCompact(receiptHeader(forger.kid), payload, forger);
    const flipped = `${row.receipt_jws.slice(0, -2)}${row.receipt_jws.at(-2) === 'A' ? 'B' : 'A'}${row.receipt_jws.at(-1)}`;
    const cases: [string, any, any, RegExp][] = [
      [
        'tampered signature',
        { ...outcome, decisions: [{ ...row, receipt_jws: flipped, receipt_hash: receiptHash(flipped) }] },
        jwks,
        /decisions\[0\].*\n.*signature/,
      ],
      [
        'broken link',
        { ...outcome, decisions: [{ ...row, prev_hash: `sha256:${'0'.repeat(64)}` }] },
        jwks,
        /decisions\[0\].*\n.*does not link/,
      ],
      [
        'wrong receipt_hash',
        { ...outcome, decisions: [{ ...row, receipt_hash: `sha256:${'1'.repeat(64)}` }] },
        jwks,
        /decisions\[0\].*\n.*does not hash/,
      ],
      ['JWKS without the kid', outcome, { keys: [] }, /decisions\[0\].*\n.*no key with kid/],
      [
        'outcome that does not replay',
        // A coherent forger shows the forged winner beside it too.
        {
          ...outcome,
          decisions: [{ ...row, resolved_winner: 'sushi', receipt_jws: forged, receipt_hash: receiptHash(forged) }],
        },
        { keys: [forger.jwk] },
        /decisions\[0\].*\n.*does not replay/,
      ],
    ];
    for (const [name, body, keys, reason] of cases) {
      await writeFile(outcomeFile, JSON.stringify(body));
      await writeFile(jwksFile, JSON.stringify(keys));
      const run = await cli('verify', '--file', outcomeFile, '--room', roomUrl(), '--jwks', jwksFile);
      expect(run.code, name).toBe(1);
      expect(run.stdout, name).toMatch(/✗ #1 decisions\[0\]/);
      expect(run.stdout, name).toMatch(reason);
      expect(run.stdout, name).toContain('verification FAILED');
    }
    const json = await cli('--json', 'verify', '--file', outcomeFile, '--room', roomUrl(), '--jwks', jwksFile);
    expect(JSON.parse(json.stdout).ok).toBe(false);
    // A saved error envelope (e.g. a read without a seat) is named as such, not as a malformed outcome.
    await writeFile(outcomeFile, JSON.stringify({ error: { code: 'room.join_required', message: 'join first' } }));
    const envelope = await cli('verify', '--file', outcomeFile, '--room', roomUrl(), '--jwks', jwksFile);
    expect(envelope.code).toBe(1);
    expect(envelope.stdout).toContain('error envelope, not an outcome (room.join_required');
  });

  it('joins, proposes, abstains, invites, follows events, closes and deletes', async () => {
    const other = await cli('--json', 'room', 'create', '-q', 'Second room?', '-o', 'a', 'b');
    const second = JSON.parse(other.stdout).slug as string;
    const creator = JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8')).rooms[second].creator.token as string;
    const joined = await cli('room', 'join', second, '--name', 'guest');
    expect(joined.code).toBe(0);
    expect(joined.stdout).toContain('token saved to');
    expect((await cli('room', 'propose', second, 'c')).code).toBe(0);
    expect((await cli('room', 'abstain', second, '--reason', 'no opinion')).code).toBe(0);
    const invite = await cli('--json', '--token', creator, 'room', 'invite', second, '--label', 'a friend');
    expect(invite.code).toBe(0);
    expect(JSON.parse(invite.stdout).invite_token ?? '[saved]').toBe('[saved]');

    const follower = execFile(process.execPath, [BUILT_CLI, '--json', 'events', second, '--follow', '--since', '0'], {
      cwd: repoRoot,
      env,
    });
    let streamed = '';
    follower.stdout!.on('data', (chunk: Buffer) => {
      streamed += chunk.toString();
    });
    await eventually(() => streamed.split('\n').length > 3, 15_000);
    expect((await cli('room', 'discuss', second, 'live')).code).toBe(0);
    await eventually(() => streamed.includes('"message.posted"') || streamed.includes('live'), 15_000);
    follower.kill('SIGINT');

    const early = await cli('--token', creator, 'room', 'close', second);
    expect(early.code).toBe(3); // a decision is still open
    clock.advance(30 * 86_400_000);
    await svc.service.scheduler.runDue();
    expect((await cli('--token', creator, 'room', 'close', second, '--statement', 'enough')).code).toBe(0);
    const deleted = await cli('--token', ADMIN_TOKEN, 'room', 'delete', second);
    expect(deleted.code).toBe(0);
    expect((await cli('room', 'read', second)).code).toBe(3);
  });

  it('serves: `conclave serve` is the service', async () => {
    const port = String(await freePort());
    const server = execFile(process.execPath, [BUILT_CLI, 'serve'], {
      cwd: repoRoot,
      env: { ...env, PORT: port, HOST: '127.0.0.1' },
    });
    try {
      await eventually(
        () =>
          // The app's own route (/healthz answers while its modules load: src/start.ts).
          fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`).then(
            (r) => r.ok,
            () => false,
          ),
        20_000,
      );
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('lists and rotates the signing keys, keeping the old ones in the JWKS', async () => {
    const before = await cli('--json', 'keys', 'list');
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout).keys).toHaveLength(1);
    expect((await cli('keys', 'rotate')).code).toBe(0);
    const after = JSON.parse((await cli('--json', 'keys', 'list')).stdout).keys;
    expect(after).toHaveLength(2);
    expect(after[1].kid).toBe(JSON.parse(before.stdout).keys[0].kid);
  });
});
