/**
 * `conclave verify` holds the receipts to the room asked about and prints only what they sign
 * (docs/cli.md, docs/receipts.md, Verifying). Two real rooms decide the same question opposite ways:
 * Y keeps the company, X sells it. Each forgery keeps every signature genuine; each must exit 1.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { DECIDED_QUESTION, type DecidedRoom, decidedRoom } from '../support/decided-room.js';
import { call, type RunningService, startService } from '../support/service.js';
import { type Run, runCli } from './run-cli.js';

const QUESTION = DECIDED_QUESTION;

describe('conclave verify: bound to the room and to what it signs', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let jwksFile: string;
  let y: DecidedRoom;
  let x: DecidedRoom;

  const cli = (...args: string[]): Promise<Run> => runCli(env, ...args);

  /** Saves an outcome body and runs `conclave verify --file` on it with the service's keys. */
  let saved = 0;
  async function verifyFile(outcome: unknown, ...extra: string[]): Promise<Run> {
    const file = path.join(dir, `outcome-${++saved}.json`);
    await writeFile(file, JSON.stringify(outcome));
    return cli('verify', '--file', file, '--jwks', jwksFile, ...extra);
  }
  const asY = (outcome: unknown) => verifyFile(outcome, '--room', y.url);
  function expectRefused(run: Run, why: RegExp): void {
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(why);
    expect(run.stdout).toContain('verification FAILED');
    expect(run.stdout).not.toMatch(/receipt\(s\) verified/);
  }

  beforeAll(async () => {
    svc = await startService({ clock });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-verify-bound-'));
    env = {
      ...process.env,
      CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'),
      CONCLAVE_URL: svc.base,
      LOG_LEVEL: 'silent',
    };
    y = await decidedRoom(
      svc.base,
      clock,
      [
        ['no', 'no', 'yes'],
        ['north', 'north', 'south'],
      ],
      'We keep the company.',
    );
    x = await decidedRoom(svc.base, clock, [['yes', 'yes', 'no']], 'We sell the company.');
    jwksFile = path.join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify((await call(svc.base, 'GET', '/.well-known/jwks.json')).body));
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('verifies the genuine room, printing the signed room, winners and closing statement', async () => {
    const run = await asY(y.outcome);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Signed room: ${y.url}\n`);
    expect(run.stdout).toContain(`signed: "${QUESTION}" → winner "no" (completed; no 2, yes 1)`);
    expect(run.stdout).toContain('signed: "Which office?" → winner "north" (completed; north 2, south 1)');
    expect(run.stdout).toContain('signed: closing statement "We keep the company."');
    expect(run.stdout).toContain(`✓ 3 receipt(s) verified for ${y.url}`);
  });

  it('refuses a file without a room unless --trust-file-room is given, and then says so', async () => {
    const nameless = await verifyFile(y.outcome);
    expect(nameless.code).toBe(2);
    expect(nameless.stderr).toContain('--room <room url>');
    expect(nameless.stderr).toContain('--trust-file-room');
    expect(nameless.stdout).not.toContain('✓');
    const trusting = await verifyFile(y.outcome, '--trust-file-room');
    expect(trusting.code).toBe(0);
    expect(trusting.stdout).toContain('--trust-file-room: this proves the receipts agree with the file');
    expect(trusting.stdout).toContain('verified for the room the file names');
    const both = await verifyFile(y.outcome, '--trust-file-room', '--room', y.url);
    expect(both.code).toBe(2);
    const notAUrl = await verifyFile(y.outcome, '--room', y.slug);
    expect(notAUrl.code).toBe(2);
    expect(notAUrl.stderr).toContain('is not a room URL');
  });

  it('refuses an edited winner and closing statement, and still prints only the signed ones', async () => {
    const edited = structuredClone(y.outcome);
    edited.decisions[0].resolved_winner = 'yes';
    edited.conclusion.closing_statement = 'We sell the company.';
    const run = await asY(edited);
    expectRefused(run, /✗ decisions\[0\]|✗ #1 decisions\[0\]/);
    expect(run.stdout).toContain('✗ resolved_winner "yes" differs from the signed winner "no"');
    expect(run.stdout).toContain(
      '✗ closing_statement "We sell the company." differs from the signed statement "We keep the company."',
    );
    expect(run.stdout).toContain(`signed: "${QUESTION}" → winner "no"`);
    expect(run.stdout).not.toContain('We sell the company."\n');
  });

  it("refuses another room's receipts under this room's slug and question, even trusting the file", async () => {
    const relabelled = structuredClone(x.outcome);
    relabelled.slug = y.slug;
    relabelled.question = QUESTION;
    const run = await asY(relabelled);
    expectRefused(run, /the signed svc\.room_id ".*" is not the room being verified/);
    expect(run.stdout).toContain(`Signed room: ${x.url}`);
    expectRefused(await verifyFile(relabelled, '--trust-file-room'), /is not the room being verified/);
  });

  it('refuses an edited status, option and question', async () => {
    const status = structuredClone(y.outcome);
    status.decisions[0].outcome_status = 'rejected';
    expectRefused(await asY(status), /outcome_status "rejected" differs from the signed status "completed"/);
    const option = structuredClone(y.outcome);
    option.decisions[1].options = ['north', 'east'];
    expectRefused(await asY(option), /options \["north","east"\] differs from the signed options/);
    const question = structuredClone(y.outcome);
    question.decisions[0].question = 'Keep the company?';
    question.question = 'Keep the company?';
    const run = await asY(question);
    expectRefused(run, /question "Keep the company\?" differs from the signed question/);
    expect(run.stdout).toMatch(/^✗ outcome\.question "Keep the company\?" differs/m);
  });

  it("refuses a changed prev_hash on the conclusion, rows showing each other's receipt, and rows reordered", async () => {
    const relinked = structuredClone(y.outcome);
    relinked.conclusion.prev_hash = relinked.decisions[0].receipt_hash;
    expectRefused(await asY(relinked), /✗ #3 conclusion[^\n]*\n(.*\n)*.*does not link/);

    const swapped = structuredClone(y.outcome);
    const [first, second] = swapped.decisions;
    for (const field of ['receipt_jws', 'receipt_hash', 'prev_hash']) {
      [first[field], second[field]] = [second[field], first[field]];
    }
    swapped.decisions = [second, first];
    expectRefused(await asY(swapped), /id ".*" differs from the signed decision_id/);

    const reordered = structuredClone(y.outcome);
    reordered.decisions.reverse();
    expectRefused(await asY(reordered), /the signed sequence 2 is not its place in the chain, 1/);
  });

  it('online, holds the receipts to the room named and prints what they sign', async () => {
    const online = await cli('verify', y.url, '--token', y.token, '--log-wait', '0');
    expect(online.stdout).toContain(`✓ 3 receipt(s) verified for ${y.url}`);
    expect(online.stdout).toContain(`Signed room: ${y.url}\n`);
    expect(online.stdout).toContain('signed: closing statement "We keep the company."');
    const elsewhere = await cli('verify', y.url, '--token', y.token, '--room', x.url, '--log-wait', '0');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stdout).toMatch(/the signed svc\.room_id ".*" is not the room being verified/);
  });
});
