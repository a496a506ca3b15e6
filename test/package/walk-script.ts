/**
 * A plain-Node ESM program that drives a real server through a room with every client method, then
 * prints what it called, the winners and the verification report. Shared by the packed server
 * package (`conclave/client`) and the packed client package (`@conclave-rooms/client`).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Writes the walk into `project`, runs it against the service at `base` and answers its report:
 * `{ called, winners, ok, errors }`.
 */
export async function runWalk(
  project: string,
  specifier: string,
  base: string,
  adminToken: string,
): Promise<{ called: string[]; winners: unknown[]; ok: boolean; errors: string[] }> {
  await writeFile(path.join(project, 'use.mjs'), walkScript(specifier));
  const { stdout } = await promisify(execFile)(process.execPath, ['use.mjs'], {
    cwd: project,
    env: { ...process.env, BASE: base, ADMIN: adminToken, HOOK: 'http://127.0.0.1:9/hook' },
  });
  return JSON.parse(stdout);
}

function walkScript(specifier: string): string {
  return `
import { ConclaveClient, ConclaveError, verifyRoomReceiptChain } from '${specifier}';
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
const report = await verifyRoomReceiptChain(final, { jwks: await anonymous.jwks(), room: room.url });
const device = await step('startDeviceAuthorization', anonymous.startDeviceAuthorization({ client_id: 'cli', agent_slug: 'packed' }));
await step('pollDeviceToken', anonymous.pollDeviceToken({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'cli' }).catch((e) => { if (e.code !== 'authorization_pending') throw e; }));
await step('deleteRoom', admin.deleteRoom({ slug }));
console.log(JSON.stringify({ called, winners: final.decisions.map((d) => d.resolved_winner), ok: report.ok, errors: report.errors }));
`;
}
