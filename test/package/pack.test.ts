/**
 * The package as a user gets it: `npm pack` (which builds), `npm install <tarball>` in a fresh
 * project, then `import { ConclaveClient, verifyRoomReceiptChain } from 'conclave/client'` in plain
 * Node drives a real server through a room, its types compile, and the `conclave` bin runs.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningService, startService } from '../support/service.js';

const exec = promisify(execFile);
const ADMIN_TOKEN = 'pack-test-admin-token-0123456789abcdef';
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const SCRIPT = `
import { ConclaveClient, ConclaveError, verifyRoomReceiptChain } from 'conclave/client';
const base = process.env.BASE;
const anonymous = new ConclaveClient({ baseUrl: base });
const admin = new ConclaveClient({ baseUrl: base, token: process.env.ADMIN });
const called = [];
const step = async (name, promise) => { const body = await promise; called.push(name); return body; };
await step('discover', anonymous.discover());
await step('health', anonymous.health());
const room = await step('createRoom', anonymous.createRoom({
  question: 'Packed?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 },
}));
const slug = room.slug;
const owner = new ConclaveClient({ baseUrl: base, token: room.creator_token });
const joined = await step('joinRoom', anonymous.joinRoom({ slug, display_name: 'second' }));
const member = new ConclaveClient({ baseUrl: base, token: joined.participant_token });
await step('getRoom', member.getRoom({ slug }));
await step('readDelta', member.readDelta({ slug, since: 0 }));
const invite = await step('createInvite', owner.createInvite({ slug, label: 'spare' }));
await step('listInvites', owner.listInvites({ slug }));
await step('revokeInvite', owner.revokeInvite({ slug, code: invite.code ?? invite.invite.code }));
await step('updateRoomSettings', owner.updateRoomSettings({ slug, settings: { max_open_decisions: 2 } }));
await step('updateMemberRole', owner.updateMemberRole({ slug, participant: joined.participant_id, role: 'participant' }));
const hook = await step('registerWebhook', owner.registerWebhook({ slug, url: process.env.HOOK }));
await step('listWebhooks', owner.listWebhooks({ slug }));
await step('unregisterWebhook', owner.unregisterWebhook({ slug, id: hook.webhook_id ?? hook.id }));
await step('discuss', member.discuss({ slug, body: 'yes, clearly' }));
await step('propose', member.propose({ slug, option: 'maybe' }));
await step('awaitNextAction', member.awaitNextAction({ slug, wait: 0 }));
await step('listEvents', member.listEvents({ slug, since_seq: 0 }));
await step('listRooms', member.listRooms());
await step('ask', owner.ask({ slug, question: 'Then what?', options: [], proposal_window: 600 }));
await step('abstain', member.abstain({ slug, decision: 2, reason: 'no view' }).catch((e) => { if (!(e instanceof ConclaveError)) throw e; }));
await member.propose({ slug, option: 'later', decision: 2 });
await step('startChoosing', owner.startChoosing({ slug, decision: 2 }));
await step('choose', owner.choose({ slug, choice: 'yes', decision: 1 }));
await member.choose({ slug, choice: 'yes', decision: 1 });
await owner.choose({ slug, choice: 'later', decision: 2 });
await member.choose({ slug, choice: 'later', decision: 2 });
const outcome = await step('waitForOutcome', owner.waitForOutcome({ slug, decision: 2, timeoutMs: 10000 }));
await step('listDecisions', member.listDecisions({ slug }));
const controller = new AbortController();
for await (const event of member.streamEvents({ slug, since_seq: 0, signal: controller.signal })) {
  if (event.data.seq >= 3) { controller.abort(); break; }
}
called.push('streamEvents');
await step('closeRoom', owner.closeRoom({ slug }));
const final = await step('outcome', member.outcome({ slug }));
const report = await verifyRoomReceiptChain(final, { jwks: await anonymous.jwks() });
const device = await step('startDeviceAuthorization', anonymous.startDeviceAuthorization({ client_id: 'cli', agent_slug: 'packed' }));
await step('pollDeviceToken', anonymous.pollDeviceToken({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'cli' }).catch((e) => { if (e.code !== 'authorization_pending') throw e; }));
await step('deleteRoom', admin.deleteRoom({ slug }));
console.log(JSON.stringify({ called, winners: final.decisions.map((d) => d.resolved_winner), ok: report.ok, errors: report.errors }));
`;

const TYPED = `
import { ConclaveClient, ConclaveError, type ChainReport } from 'conclave/client';
const client = new ConclaveClient({ baseUrl: 'http://127.0.0.1:1' });
export async function run(): Promise<string> {
  try {
    const body = await client.choose({ slug: 'abc', choice: 'yes' });
    return String(body.status);
  } catch (error) {
    return error instanceof ConclaveError ? error.code : 'network';
  }
}
export const empty: ChainReport = { ok: true, receipts: [], errors: [] };
`;

describe('the packed package', () => {
  let svc: RunningService;
  let project: string;
  beforeAll(async () => {
    svc = await startService({ env: { CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    project = await mkdtemp(path.join(tmpdir(), 'conclave-pack-'));
    await exec('npm', ['pack', '--pack-destination', project], { cwd: repoRoot, timeout: 180_000 });
    const tarball = (await readdir(project)).find((file) => file.endsWith('.tgz'))!;
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'user-project', type: 'module', private: true }),
    );
    // From the npm cache the install already populated; no install scripts (the client needs no native module).
    await exec(
      'npm',
      [
        'install',
        path.join(project, tarball),
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: project, timeout: 240_000 },
    );
  }, 420_000);
  afterAll(async () => {
    await svc?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('imports conclave/client in plain Node and drives a real server through a room with every method', async () => {
    await writeFile(path.join(project, 'use.mjs'), SCRIPT);
    const { stdout } = await exec(process.execPath, ['use.mjs'], {
      cwd: project,
      env: { ...process.env, BASE: svc.base, ADMIN: ADMIN_TOKEN, HOOK: 'http://127.0.0.1:9/hook' },
    });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ winners: ['yes', 'later'], ok: true, errors: [] });
    expect(result.called).toHaveLength(31);
  });

  it('ships types that compile against conclave/client', async () => {
    await writeFile(path.join(project, 'typed.ts'), TYPED);
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    await exec(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--lib',
        'es2023,dom',
        'typed.ts',
      ],
      { cwd: project },
    );
  });

  it('installs the conclave command', async () => {
    const bin = path.join(project, 'node_modules', '.bin', 'conclave');
    const { stdout } = await exec(bin, ['--help'], { cwd: project });
    expect(stdout).toContain('verify');
    const failed = await exec(bin, ['room', 'read', 'nosuchroom', '--base', svc.base], { cwd: project }).catch(
      (e) => e,
    );
    expect(failed.code).toBe(3);
  });
});
