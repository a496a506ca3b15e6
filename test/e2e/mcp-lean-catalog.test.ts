/**
 * The catalogs an agent reads at the start of every session stay affordable (docs/agents.md, MCP)
 * and stay true: `tools/list` on each endpoint fits its budget in both eras, every tool is still
 * described, and every result of a whole room's life, successes and refusals alike, passes the MCP
 * SDK clients' own check of structuredContent against the listed outputSchema (the v2 client checks
 * successes, the v1 client every result) and the v2 SDK's validator run here on each of them.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, type Era, type ListedTool, type McpSession, rpc, type ToolOutcome } from '../support/mcp-clients.js';
import { type RunningService, startService } from '../support/service.js';

/** Characters of the `tools/list` result, as sent. */
const BUDGET = { '/mcp': 40_000, '/mcp/host': 60_000 } as const;
type Endpoint = keyof typeof BUDGET;
const ENDPOINTS = Object.keys(BUDGET) as Endpoint[];

/** One raw `tools/list` in the given era: the JSON text of its result, as the client receives it. */
async function listedText(url: string, era: Era): Promise<string> {
  const modern = era === '2026-07-28';
  const meta = modern
    ? {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': era,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      }
    : {};
  const answer = await rpc(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: meta }), {
    'mcp-protocol-version': era,
    ...(modern ? { 'mcp-method': 'tools/list' } : {}),
  });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json?.result?.tools, answer.text.slice(0, 300)).toBeInstanceOf(Array);
  return JSON.stringify(answer.json.result);
}

describe.each(ERAS)('the lean MCP catalogs ($era)', ({ era, connect }) => {
  let svc: RunningService;
  let host: McpSession;
  let participant: McpSession;
  const listed = {} as Record<Endpoint, ListedTool[]>;
  const schemas = new Map<string, Record<string, unknown>>();
  const validator = new AjvJsonSchemaValidator();
  /** `tool:ok` and `tool:error` for every call made, to check that every tool succeeded once. */
  const seen = new Set<string>();

  beforeAll(async () => {
    svc = await startService({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    host = await connect(`${svc.base}/mcp/host`);
    participant = await connect(`${svc.base}/mcp`);
    // Listing first is what arms the clients' output validation (they compile the listed schemas).
    listed['/mcp/host'] = await host.tools();
    listed['/mcp'] = await participant.tools();
    for (const tool of [...listed['/mcp'], ...listed['/mcp/host']]) schemas.set(tool.name, tool.outputSchema ?? {});
  });
  afterAll(async () => {
    await host?.close();
    await participant?.close();
    await svc?.stop();
  });

  /** A call through the SDK client (which validates), then the SDK's validator on the result again. */
  async function use(session: McpSession, name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    const outcome = await session.call(name, args);
    const check = validator.getValidator(schemas.get(name)!)(outcome.body);
    expect(check.valid, `${name} ${JSON.stringify(outcome.body).slice(0, 400)}: ${check.errorMessage}`).toBe(true);
    seen.add(`${name}:${outcome.isError ? 'error' : 'ok'}`);
    return outcome;
  }
  async function ok(session: McpSession, name: string, args: Record<string, unknown>): Promise<any> {
    const outcome = await use(session, name, args);
    expect(outcome.isError, `${name}: ${JSON.stringify(outcome.body)}`).toBe(false);
    return outcome.body;
  }
  async function refused(session: McpSession, name: string, args: Record<string, unknown>, code: string) {
    const outcome = await use(session, name, args);
    expect(outcome.isError, name).toBe(true);
    expect(outcome.body.error.code, name).toBe(code);
  }

  it('fits tools/list in its budget on each endpoint', async () => {
    for (const endpoint of ENDPOINTS) {
      const text = await listedText(`${svc.base}${endpoint}`, era);
      expect(text.length, `${endpoint} tools/list is ${text.length} characters`).toBeLessThanOrEqual(BUDGET[endpoint]);
    }
  });

  it('still describes every tool, its arguments and its result', () => {
    for (const endpoint of ENDPOINTS) {
      for (const tool of listed[endpoint]) {
        expect(tool.title, tool.name).toBeTruthy();
        expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(100);
        expect(tool.description, tool.name).toMatch(/Returns: /);
        expect(Object.keys(tool.inputSchema.properties ?? {}).length, tool.name).toBeGreaterThan(0);
        expect(tool.outputSchema, tool.name).toMatchObject({ type: 'object', description: expect.any(String) });
        // The error envelope is one short branch, not the whole list of codes in every tool.
        expect(JSON.stringify(tool.outputSchema), tool.name).not.toContain('room.not_found');
      }
    }
  });

  it('runs a whole room through both catalogs with every result valid against its outputSchema', async () => {
    const created = await ok(host, 'create_room', {
      question: 'Which plan?',
      options: ['alpha', 'beta'],
      config: { early_close: true, settle_window: 0, max_open_decisions: 2 },
    });
    const slug: string = created.slug;
    const creator: string = created.creator_token;
    await ok(host, 'list_rooms', { token: creator });
    const invited = await ok(host, 'invite_to_room', { slug, token: creator, label: 'scout' });
    expect(invited.invite_token).toMatch(/^it_/);
    const spare = await ok(host, 'invite_to_room', { slug, token: creator, label: 'spare' });
    await ok(host, 'revoke_invite', { slug, token: creator, code: spare.invite.code });
    await ok(host, 'list_invites', { slug, token: creator });
    await ok(host, 'update_room_settings', { slug, token: creator, settings: { read_receipts: true } });

    const seat = await ok(participant, 'join_room', { slug, invite: invited.invite_token, display_name: 'scout' });
    const token: string = seat.participant_token;
    const view = await ok(participant, 'read_room', { slug, token });
    await ok(participant, 'read_room', { slug, token, include: 'full' });
    await ok(participant, 'read_room', { slug, token, since: 0 });
    await ok(participant, 'discuss', { slug, token, body: 'Alpha looks cheaper.', stance: 'agree' });
    await ok(participant, 'wait', { slug, token, wait_seconds: 0 });
    await ok(participant, 'wait', { slug, token, since: view.current_through, wait_seconds: 0 });

    const second = (await ok(host, 'ask', { slug, token: creator, question: 'Which name?', proposal_window: 600 }))
      .decision.seq;
    await ok(participant, 'propose', { slug, token, option: 'gamma', decision: second });
    await ok(participant, 'propose', { slug, token, option: 'delta', decision: second });
    await ok(host, 'start_choosing', { slug, token: creator, decision: second });
    await ok(host, 'wait_outcome', { slug, token: creator, since_seq: 0, wait_seconds: 0 });

    await ok(participant, 'choose', { slug, token, choice: 'alpha', decision: 1 });
    // The creator votes on the participant catalog with its creator_token (the host instructions say so).
    const sealed = await ok(participant, 'choose', { slug, token: creator, choice: 1, decision: 1 });
    expect(sealed.status).toBe('resolved');
    await ok(participant, 'abstain', { slug, token, reason: 'No view on names.', decision: second });
    await ok(participant, 'ask', { slug, token, question: 'Ship on Friday?', options: ['yes', 'no'] });
    await ok(participant, 'start_choosing', { slug, token, decision: 3 });
    await ok(participant, 'choose', { slug, token, choice: 'yes', decision: 3 });
    await ok(participant, 'choose', { slug, token: creator, choice: 'yes', decision: 3 });
    await ok(participant, 'choose', { slug, token: creator, choice: 'gamma', decision: second });
    await ok(participant, 'outcome', { slug, token });
    await ok(host, 'list_decisions', { slug, token: creator });
    await ok(host, 'wait_outcome', { slug, token: creator, since_seq: 0, wait_seconds: 0 });

    await ok(host, 'list_events', { slug, token: creator, since_seq: 0 });
    const hook = await ok(host, 'register_webhook', { slug, token: creator, url: 'http://127.0.0.1:9/hook' });
    await ok(host, 'list_webhooks', { slug, token: creator });
    await ok(host, 'unregister_webhook', { slug, token: creator, webhook_id: hook.webhook_id });
    await ok(host, 'close_room', { slug, token: creator, statement: 'Done.' });
    await ok(participant, 'outcome', { slug, token });

    // Refusals: the envelope passes the same schemas (the v1 client checks isError results too).
    await refused(participant, 'read_room', { slug: 'nosuchroom1' }, 'room.not_found');
    await refused(participant, 'choose', { slug, token: 't_not-a-token', choice: 'alpha' }, 'auth.invalid_token');
    await refused(participant, 'discuss', { slug, token, body: 'Too late.' }, 'room.concluded');
    await refused(participant, 'wait', { slug, wait_seconds: 0 }, 'auth.required');
    await refused(host, 'create_room', { question: 'Bad?', config: { voting_window: 1 } }, 'input.invalid');
    await refused(host, 'list_invites', { slug, token }, 'authority.denied');

    const unused = [...listed['/mcp'], ...listed['/mcp/host']]
      .map((tool) => tool.name)
      .filter((name) => !seen.has(`${name}:ok`));
    expect(unused, 'tools never called successfully').toEqual([]);
  }, 60_000);
});
