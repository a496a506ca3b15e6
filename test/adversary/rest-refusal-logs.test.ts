/**
 * Refused calls log one line with their code, never a stack. The attack is volume: every 4xx an
 * attacker provokes costs the operator log space, and a stack per refusal buries the real failures
 * and says nothing about the service. Before, a refusal left only the access line (no code, so the
 * operator could not tell a wrong token from a missing room); the JSON-RPC rejections were logged with
 * their error object. Now each refusal — REST, MCP tool call — is one `request refused` line at info
 * with `error_code` and `status`, and no log line at any level carries a stack or the refused token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { connectModern, rpc } from '../support/mcp-clients.js';
import { call } from '../support/service.js';

describe('refused calls in the log', () => {
  let svc: ChildService;
  beforeAll(async () => {
    svc = await spawnService({ LOG_LEVEL: 'trace', RATE_LIMIT_IP_PER_MIN: '0' }, { capture: true });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const records = () =>
    svc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('writes one line with the code per refusal, and no stack anywhere', async () => {
    const secret = 't_refusedTokenThatMustNotBeLogged0123456789ab';
    const created = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Logs' } });
    const slug = created.body.slug as string;
    const wrongToken = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: secret,
      body: { body: 'hello' },
    });
    expect(wrongToken.status).toBe(401);
    expect((await call(svc.base, 'GET', '/api/rooms/nosuchroom0')).status).toBe(404);
    const badJson = await call(svc.base, 'POST', '/api/rooms', {
      raw: `{"about": "${secret}"`,
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    const mcp = await connectModern(`${svc.base}/mcp`);
    try {
      expect((await mcp.call('read_room', { slug, token: secret })).isError).toBe(true);
    } finally {
      await mcp.close();
    }
    await rpc(`${svc.base}/mcp`, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "token": "${secret}"`);

    await eventually(() => records().filter((r) => r.msg === 'request refused').length >= 4);
    const refused = records().filter((r) => r.msg === 'request refused');
    expect(refused.map((r) => [r.error_code, r.status, r.level])).toEqual(
      expect.arrayContaining([
        ['auth.invalid_token', 401, 30],
        ['room.not_found', 404, 30],
        ['input.invalid', 400, 30],
      ]),
    );
    expect(refused.find((r) => r.tool === 'read_room')).toMatchObject({ error_code: 'auth.invalid_token', level: 30 });
    const output = svc.output();
    expect(output).not.toMatch(/"stack"|\n\s+at /);
    expect(output).not.toContain(secret);
  });
});
