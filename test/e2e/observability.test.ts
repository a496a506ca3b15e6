/**
 * What an operator sees of every transport (docs/architecture.md, Observability): MCP tool calls per
 * tool and error code in both eras, the domain series (rooms, decisions by mechanism, receipts,
 * webhook attempts, mandate verifications, rate-limit refusals by route class), a /metrics text
 * promtool accepts without a warning, and the error code on every 4xx/5xx access-log line.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { freshAgentKey, selfIssuedMandate } from '../support/mandates.js';
import { ERAS } from '../support/mcp-clients.js';
import { hasPromtool, PROMTOOL } from '../support/promtool.js';
import { call, type RunningService, startService } from '../support/service.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-token-admin-token-admin-token-0';

async function scrape(base: string): Promise<string> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** One sample's value (0 when the series does not exist yet); labels in the order prom-client writes them. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const rendered = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(',');
  const series = rendered === '' ? name : `${name}{${rendered}}`;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  let svc: RunningService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    svc = await startService({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', CONCLAVE_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.close();
  });

  it('counts an MCP choose refused with choice.invalid_option under the tool and the code, in both eras', async () => {
    const room = await seatedRoom(svc.base, { question: 'Which?', options: ['alpha', 'beta'] }, 1);
    for (const { connect } of ERAS) {
      const session = await connect(`${svc.base}/mcp`);
      try {
        const refused = await session.call('choose', { slug: room.slug, token: room.tokens[0], choice: 'zeta' });
        expect(refused.isError).toBe(true);
        expect(refused.body.error.code).toBe('choice.invalid_option');
        expect((await session.call('read_room', { slug: room.slug, token: room.tokens[0] })).isError).toBe(false);
      } finally {
        await session.close();
      }
    }
    const text = await scrape(svc.base);
    expect(sample(text, 'conclave_mcp_tool_errors_total', { tool: 'choose', code: 'choice.invalid_option' })).toBe(2);
    expect(sample(text, 'conclave_mcp_tool_calls_total', { tool: 'choose' })).toBe(2);
    expect(sample(text, 'conclave_mcp_tool_calls_total', { tool: 'read_room' })).toBe(2);
    expect(sample(text, 'conclave_mcp_tool_call_duration_seconds_count', { tool: 'choose' })).toBe(2);
    expect(text).not.toMatch(/conclave_mcp_tool_errors_total\{tool="read_room"/);
  });

  it('counts rooms, decisions by mechanism, receipts, webhook attempts and mandate verifications', async () => {
    const before = await scrape(svc.base);
    const delta = (after: string, name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);

    const room = await seatedRoom(
      svc.base,
      { question: 'Ship it?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
      2,
    );
    const hook = await call(svc.base, 'POST', `/api/rooms/${room.slug}/webhooks`, {
      token: room.tokens[0],
      body: { url: receiver.url, event_types: ['decision.completed'] },
    });
    expect(hook.status).toBe(200);
    for (const token of room.tokens) {
      const chosen = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token, body: { choice: 'yes' } });
      expect(chosen.status).toBe(200);
    }
    const closed = await call(svc.base, 'POST', `/api/rooms/${room.slug}/close`, { token: room.tokens[0], body: {} });
    expect(closed.status).toBe(200);
    const doomed = await seatedRoom(svc.base, { about: 'Short-lived' }, 1);
    const deleted = await call(svc.base, 'DELETE', `/api/rooms/${doomed.slug}`, {
      token: ADMIN,
      headers: { 'x-confirm-delete': doomed.slug },
    });
    expect(deleted.status).toBe(200);
    await eventually(() => receiver.received.length >= 1);

    const signer = freshAgentKey();
    const withMandate = (jws: string) =>
      call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
        headers: { 'x-mandate': jws },
        body: { body: 'hi' },
      });
    expect((await withMandate(selfIssuedMandate(signer, { expiresIn: -60 }))).body.error.code).toBe('mandate.expired');
    // A valid mandate in a closed room: verified, then refused by the room.
    expect((await withMandate(selfIssuedMandate(signer))).body.error.code).not.toMatch(/^mandate\./);

    const after = await scrape(svc.base);
    expect(delta(after, 'conclave_rooms_total', { change: 'created' })).toBe(2);
    expect(delta(after, 'conclave_rooms_total', { change: 'concluded' })).toBe(1);
    expect(delta(after, 'conclave_rooms_total', { change: 'deleted' })).toBe(1);
    expect(delta(after, 'conclave_decisions_opened_total', { mechanism: 'simple_majority' })).toBe(1);
    expect(delta(after, 'conclave_decisions_sealed_total', { mechanism: 'simple_majority', status: 'completed' })).toBe(
      1,
    );
    expect(delta(after, 'conclave_receipts_signed_total')).toBe(2);
    await eventually(
      async () => sample(await scrape(svc.base), 'conclave_webhook_attempts_total', { outcome: 'delivered' }) >= 1,
    );
    expect(delta(after, 'conclave_mandate_verifications_total', { result: 'mandate.expired' })).toBe(1);
    expect(delta(after, 'conclave_mandate_verifications_total', { result: 'ok' })).toBe(1);
    expect(sample(after, 'conclave_webhook_origins_tripped')).toBe(0);
  });

  it.skipIf(!hasPromtool)('serves a text that promtool checks without a warning', async () => {
    const text = await scrape(svc.base);
    const result = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('rate-limit refusals', () => {
  let svc: RunningService;
  beforeAll(async () => {
    // Behind a trusted proxy, so the scrape comes from another address than the limited client.
    svc = await startService({ env: { RATE_LIMIT_IP_PER_MIN: '2', TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('are counted by route class', async () => {
    const statuses: number[] = [];
    const client = { headers: { 'x-forwarded-for': '203.0.113.7' } };
    for (let i = 0; i < 3; i++) statuses.push((await call(svc.base, 'GET', '/api/rooms/nosuchroom0', client)).status);
    expect(statuses).toEqual([404, 404, 429]);
    const text = await scrape(svc.base);
    expect(sample(text, 'conclave_rate_limited_total', { route_class: 'read' })).toBe(1);
    expect(sample(text, 'conclave_rate_limited_total', { route_class: 'create' })).toBe(0);
  });
});

describe('the access log', () => {
  let child: ChildService;
  beforeAll(async () => {
    child = await spawnService({ LOG_LEVEL: 'info', RATE_LIMIT_IP_PER_MIN: '0' }, { capture: true });
  });
  afterAll(async () => {
    await child?.stop();
  });

  it('names the error code on every 4xx and 5xx line', async () => {
    const created = await call(child.base, 'POST', '/api/rooms', { body: { about: 'Logs' } });
    const slug = created.body.slug as string;
    await call(child.base, 'GET', '/api/rooms/nosuchroom0');
    await call(child.base, 'GET', '/no/such/route');
    await call(child.base, 'POST', `/api/rooms/${slug}/discuss`, { token: 't_wrong', body: { body: 'x' } });
    const completed = () =>
      child
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; res?: { statusCode: number; error_code?: string } })
        .filter((record) => record.msg === 'request completed' && record.res !== undefined);
    await eventually(() => completed().length >= 5);
    const answers = completed().map((record) => record.res!);
    expect(answers).toEqual(
      expect.arrayContaining([
        { statusCode: 200 },
        { statusCode: 404, error_code: 'room.not_found' },
        { statusCode: 404, error_code: 'vendor:conclave:not_found' },
        { statusCode: 401, error_code: 'auth.invalid_token' },
      ]),
    );
    expect(answers.filter((answer) => answer.statusCode >= 400)).toHaveLength(3);
    for (const answer of answers) if (answer.statusCode >= 400) expect(answer.error_code).toEqual(expect.any(String));
  });
});
