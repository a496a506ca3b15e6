/**
 * Regenerates src/http/openapi-examples.ts: the 2xx response example of every room operation in the
 * OpenAPI document, captured from a real service driven through one room's life (create, join,
 * discuss, choose, ask, propose, start choosing, abstain, invites, settings, webhooks, close,
 * outcome, delete) on a fixed clock, then made stable (slug, base URL). Every response is validated
 * against the document on the way (test/support/service.ts), and test/e2e/contract.test.ts checks
 * each example against its schema. Run: npx tsx scripts/openapi-examples.ts
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { call, startService } from '../test/support/service.js';

const START = Date.parse('2026-05-01T10:00:00.000Z');
let now = START;
const clock = { now: () => now };
const svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: 'admin-token-for-examples-0123456789' } });
const examples: Record<string, unknown> = {};

async function record(
  name: string,
  method: string,
  url: string,
  options: Parameters<typeof call>[3] = {},
): Promise<Record<string, any>> {
  now += 7_000;
  const answer = await call(svc.base, method, url, options);
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${name}: ${method} ${url} answered ${answer.status}: ${answer.text.slice(0, 400)}`);
  }
  if (name) examples[name] = answer.body;
  return answer.body;
}

try {
  const created = await record('createRoom', 'POST', '/api/rooms', {
    body: {
      question: 'Which region do we deploy to first?',
      options: ['eu-west', 'us-east'],
      config: { mechanism: 'simple_majority', voting_window: 3600 },
      display_name: 'release-host',
    },
  });
  const slug = created.slug as string;
  const host = created.creator_token as string;
  const room = `/api/rooms/${slug}`;
  const joined = await record('joinRoom', 'POST', `${room}/join`, { body: { display_name: 'planner-agent' } });
  const planner = joined.participant_token as string;
  const other = await record('', 'POST', `${room}/join`, { body: { display_name: 'observer-bot' } });
  await record('discuss', 'POST', `${room}/discuss`, {
    token: planner,
    body: { body: 'eu-west keeps us inside the data residency rules.', stance: 'extend', decision: 1 },
  });
  await record('choose', 'POST', `${room}/choose`, {
    token: planner,
    body: { choice: 1, reason: 'Data residency comes first.' },
  });
  await record('chooseByGet', 'GET', `${room}/choose?choice=1`, { token: host });
  await record('getRoom', 'GET', room, { token: planner });
  await record('listDecisions', 'GET', `${room}/decisions`, { token: planner });
  await record('awaitNextAction', 'GET', `${room}/next-action?wait=0`, { token: planner });
  await record('listEvents', 'GET', `${room}/events?since_seq=0&limit=5`, { token: host });
  const invite = await record('createInvite', 'POST', `${room}/invites`, {
    token: host,
    body: { label: 'security-reviewer', role: 'participant', expected: true },
  });
  await record('listInvites', 'GET', `${room}/invites`, { token: host });
  await record('revokeInvite', 'DELETE', `${room}/invites/${invite.invite?.code ?? invite.code}`, { token: host });
  await record('updateMemberRole', 'PATCH', `${room}/members/${other.participant_id}`, {
    token: host,
    body: { role: 'observer' },
  });
  await record('updateRoomSettings', 'PATCH', `${room}/settings`, {
    token: host,
    body: { settings: { voting_window: 7200, early_close: true } },
  });
  await record('', 'PATCH', `${room}/settings`, { token: host, body: { settings: { max_open_decisions: 3 } } });
  const hook = await record('registerWebhook', 'POST', `${room}/webhooks`, {
    token: host,
    body: { url: 'https://93.184.215.14/hooks/conclave', event_types: ['decision.completed'] },
  });
  await record('listWebhooks', 'GET', `${room}/webhooks`, { token: host });
  await record('unregisterWebhook', 'DELETE', `${room}/webhooks/${hook.webhook_id}`, { token: host });

  now += 3_700_000;
  await record('ask', 'POST', `${room}/ask`, {
    token: host,
    body: { question: 'Which region do we deploy to second?', options: ['us-east', 'ap-south'] },
  });
  await record('', 'POST', `${room}/ask`, { token: host, body: { question: 'Which city hosts the launch review?' } });
  await record('propose', 'POST', `${room}/options`, { token: planner, body: { option: 'Lisbon', decision: 3 } });
  await record('', 'POST', `${room}/options`, { token: planner, body: { option: 'Montreal', decision: 3 } });
  await record('startChoosing', 'POST', `${room}/start-choosing`, { token: host, body: { decision: 3 } });
  await record('abstain', 'POST', `${room}/abstain`, {
    token: planner,
    body: { reason: 'I have a conflict of interest.', decision: 2 },
  });
  now += 7_300_000;
  await record('getRoomFull', 'GET', `${room}?include=full`, { token: host });
  await record('closeRoom', 'POST', `${room}/close`, { token: host, body: { statement: 'We deploy to eu-west first.' } });
  // The log sequences receipts within about a second (docs/transparency-log.md): wait for the inclusion proofs.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await record('getOutcome', 'GET', `${room}/outcome`, { token: planner });
  await record('getRoomMachine', 'GET', `${room}/machine`, { token: host });

  const doomed = await record('', 'POST', '/api/rooms', { body: { about: 'A room to delete' } });
  await record('deleteRoom', 'DELETE', `/api/rooms/${doomed.slug}`, {
    token: doomed.creator_token,
    headers: { 'x-confirm-delete': doomed.slug },
  });

  let text = JSON.stringify(examples);
  text = text.replaceAll(slug, 'k7mq2xw9pa').replaceAll(doomed.slug, 'p3n8t5vq2r').replaceAll(svc.base, 'https://conclave.example');
  text = text.replaceAll(svc.base.replace(/^https?:\/\//, ''), 'conclave.example');
  const file = 'src/http/openapi-examples.ts';
  writeFileSync(
    file,
    `/**\n * 2xx response examples of the room operations, by operation name: captured from a real service by\n * scripts/openapi-examples.ts (do not edit by hand; rerun it). test/e2e/contract.test.ts checks each against its schema.\n */\nexport const RESPONSE_EXAMPLES: Readonly<Record<string, Record<string, unknown>>> = ${text};\n`,
  );
  execFileSync('npx', ['biome', 'format', '--write', file], { stdio: 'inherit' });
  console.log(`wrote ${Object.keys(examples).length} examples to ${file}`);
} finally {
  await svc.stop();
}
