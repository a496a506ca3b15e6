/**
 * Error parity: the same bad calls over REST and over MCP (both eras) fail with the same error code,
 * MCP carrying the REST envelope in an isError result. Then the protocol-level answers that stay
 * JSON-RPC or HTTP: empty and malformed bodies, GET/DELETE, unknown tools and methods.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, type McpSession, ok, rpc } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

let svc: RunningService;
let slug: string;
let annToken: string;
let closedSlug: string;
let closedToken: string;

beforeAll(async () => {
  svc = await startService();
  const created = await call(svc.base, 'POST', '/api/rooms', {
    body: {
      question: 'Which one?',
      options: ['alpha', 'beta'],
      config: { conclusion_authority: { kind: 'operator' } },
    },
  });
  slug = created.body.slug;
  annToken = (await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'ann' } })).body
    .participant_token;
  const closed = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'A room that is already over' } });
  closedSlug = closed.body.slug;
  closedToken = closed.body.creator_token;
  const closing = await call(svc.base, 'POST', `/api/rooms/${closedSlug}/close`, { token: closedToken, body: {} });
  expect(closing.status).toBe(200);
});
afterAll(async () => {
  await svc.stop();
});

interface Case {
  name: string;
  code: string;
  rest: () => { method: string; url: string; token?: string; body?: unknown; headers?: Record<string, string> };
  tool: string;
  args: () => Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: 'unknown room',
    code: 'room.not_found',
    rest: () => ({ method: 'POST', url: '/api/rooms/zzzzzzzzzz/choose', token: annToken, body: { choice: 'alpha' } }),
    tool: 'choose',
    args: () => ({ slug: 'zzzzzzzzzz', token: annToken, choice: 'alpha' }),
  },
  {
    name: 'bad token',
    code: 'auth.invalid_token',
    rest: () => ({
      method: 'POST',
      url: `/api/rooms/${slug}/choose`,
      token: 't_not-a-real-token',
      body: { choice: 'alpha' },
    }),
    tool: 'choose',
    args: () => ({ slug, token: 't_not-a-real-token', choice: 'alpha' }),
  },
  {
    name: 'no credential',
    code: 'auth.required',
    rest: () => ({ method: 'POST', url: `/api/rooms/${slug}/discuss`, body: { body: 'hello' } }),
    tool: 'discuss',
    args: () => ({ slug, body: 'hello' }),
  },
  {
    name: 'invalid option',
    code: 'choice.invalid_option',
    rest: () => ({ method: 'POST', url: `/api/rooms/${slug}/choose`, token: annToken, body: { choice: 'zeta' } }),
    tool: 'choose',
    args: () => ({ slug, token: annToken, choice: 'zeta' }),
  },
  {
    name: 'invalid input',
    code: 'input.invalid',
    rest: () => ({ method: 'POST', url: `/api/rooms/${slug}/discuss`, token: annToken, body: { body: '' } }),
    tool: 'discuss',
    args: () => ({ slug, token: annToken, body: '' }),
  },
  {
    name: 'concluded room',
    code: 'room.concluded',
    rest: () => ({ method: 'POST', url: `/api/rooms/${closedSlug}/discuss`, token: closedToken, body: { body: 'hi' } }),
    tool: 'discuss',
    args: () => ({ slug: closedSlug, token: closedToken, body: 'hi' }),
  },
  {
    name: 'authority denied (participant closing an operator-concluded room)',
    code: 'authority.denied',
    rest: () => ({ method: 'POST', url: `/api/rooms/${slug}/close`, token: annToken, body: {} }),
    tool: 'close_room',
    args: () => ({ slug, token: annToken }),
  },
];

describe.each(ERAS)('error parity REST ↔ MCP ($era)', ({ era, connect }) => {
  let participant: McpSession;
  beforeAll(async () => {
    participant = await connect(`${svc.base}/mcp`);
  });
  afterAll(async () => {
    await participant?.close();
  });

  it.each(CASES)('$name → $code', async (c) => {
    const request = c.rest();
    const rest = await call(svc.base, request.method, request.url, request);
    expect(rest.body.error.code).toBe(c.code);
    const mcp = await participant.call(c.tool, c.args());
    expect(mcp.isError).toBe(true);
    expect(mcp.body.error.code).toBe(rest.body.error.code);
    expect(mcp.body.error.details).toEqual(rest.body.error.details);
    expect(mcp.body.error.request_id).toEqual(expect.any(String));
    // The same refusal, worded for a tool call: no header a tool call cannot send.
    const said = `${mcp.body.error.message} ${mcp.body.error.hint ?? ''}`;
    expect(said).not.toMatch(/Authorization|X-Mandate|X-Room-Password|Idempotency-Key/);
    if (c.code === 'auth.required') expect(mcp.body.error.hint).toMatch(/token argument.*_meta\.mandate/);
  });

  it('idempotency: a replay returns the first result, a different request with the same key conflicts', async () => {
    const key = `key-${era}`;
    const restFirst = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: annToken,
      body: { body: 'first' },
      headers: { 'idempotency-key': key },
    });
    const restConflict = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: annToken,
      body: { body: 'second' },
      headers: { 'idempotency-key': key },
    });
    expect(restFirst.status).toBe(200);
    expect(restConflict.body.error.code).toBe('idempotency.conflict');

    // The same key on MCP is a different scope (catalog path + tool + slug), so it starts fresh.
    const first = await ok(participant, 'discuss', { slug, token: annToken, body: 'first', idempotency_key: key });
    expect(first.id).not.toBe(restFirst.body.id);
    const replay = await ok(participant, 'discuss', { slug, token: annToken, body: 'first', idempotency_key: key });
    expect(replay).toEqual(first);
    const conflict = await participant.call('discuss', { slug, token: annToken, body: 'second', idempotency_key: key });
    expect(conflict.isError).toBe(true);
    expect(conflict.body.error.code).toBe(restConflict.body.error.code);
  });

  it('answers an unknown tool with JSON-RPC -32602', async () => {
    await expect(participant.callRaw('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
    await expect(participant.callRaw('create_room', { question: 'Not here?' })).rejects.toMatchObject({
      code: -32602,
    });
  });
});

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

function modern(method: string, params: Record<string, unknown> = {}, id: number | null = 1) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    ...(id !== null ? { id } : {}),
    method,
    params: { ...params, _meta: MODERN_META },
  });
  return { body, headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method } };
}

describe('protocol-level answers', () => {
  it('rejects an empty or malformed body with JSON-RPC -32700', async () => {
    for (const path of ['/mcp', '/mcp/host']) {
      const empty = await rpc(`${svc.base}${path}`, undefined);
      expect(empty.status).toBe(400);
      expect(empty.json.error.code).toBe(-32700);
      const malformed = await rpc(`${svc.base}${path}`, '{"jsonrpc": "2.0", "id": 1,');
      expect(malformed.status).toBe(400);
      expect(malformed.json.error.code).toBe(-32700);
    }
  });

  it('answers a non-JSON body with 415', async () => {
    const response = await rpc(`${svc.base}/mcp`, 'hello', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
  });

  it('answers GET and DELETE with the REST 405 envelope', async () => {
    for (const path of ['/mcp', '/mcp/host']) {
      for (const method of ['GET', 'DELETE']) {
        const response = await call(svc.base, method, path);
        expect(response.status).toBe(405);
        expect(response.body.error).toMatchObject({
          code: 'vendor:conclave:method_not_allowed',
          details: { allowed: ['POST'] },
        });
        expect(response.headers.get('allow')).toBe('POST');
      }
    }
  });

  it('refuses bodies over 4 MiB', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { pad: 'x'.repeat(4 * 1024 * 1024) },
    });
    const response = await rpc(`${svc.base}/mcp`, huge);
    expect(response.status).toBe(413);
  });

  it('discovers the current era with tools as the only capability', async () => {
    const { body, headers } = modern('server/discover');
    const response = await rpc(`${svc.base}/mcp/host`, body, headers);
    expect(response.status).toBe(200);
    expect(response.json.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: false } },
    });
    expect(Object.keys(response.json.result.capabilities)).toEqual(['tools']);
    expect(response.json.result.instructions).toMatch(/host catalog/);
    expect(JSON.stringify(response.json.result)).toContain('"name":"conclave"');
  });

  it('handles ping, notifications, unknown methods and unknown tools in both eras', async () => {
    const url = `${svc.base}/mcp`;
    expect((await rpc(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))).json.result).toEqual({});
    // The SDK's 2026-07-28 leg has no ping handler (07-mcp.md §1 defers protocol answers to the SDK).
    const ping = modern('ping');
    expect((await rpc(url, ping.body, ping.headers)).json.error.code).toBe(-32601);

    const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const notified = await rpc(url, initialized);
    expect(notified.status).toBe(202);
    expect(notified.text).toBe('');

    const unknownMethod = modern('rooms/explode');
    expect((await rpc(url, unknownMethod.body, unknownMethod.headers)).json.error.code).toBe(-32601);
    const legacyUnknown = await rpc(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rooms/explode' }));
    expect(legacyUnknown.json.error.code).toBe(-32601);

    const unknownTool = modern('tools/call', { name: 'no_such_tool', arguments: {} });
    const answer = await rpc(url, unknownTool.body, { ...unknownTool.headers, 'mcp-name': 'no_such_tool' });
    expect(answer.json.error.code).toBe(-32602);
  });

  it('keeps the correlation id: echoed in the header and used as request_id in tool errors', async () => {
    const response = await rpc(
      `${svc.base}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'read_room', arguments: { slug: 'zzzzzzzzzz' } },
      }),
      { 'x-correlation-id': 'corr-mcp-1' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-correlation-id')).toBe('corr-mcp-1');
    expect(response.json.result.isError).toBe(true);
    expect(response.json.result.structuredContent.error).toMatchObject({
      code: 'room.not_found',
      request_id: 'corr-mcp-1',
    });
  });

  it('takes seat tokens from the token argument only, not from an Authorization header', async () => {
    const discuss = (args: Record<string, unknown>) =>
      rpc(
        `${svc.base}/mcp`,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'discuss', arguments: args } }),
        { authorization: `Bearer ${annToken}` },
      );
    const withHeader = await discuss({ slug, body: 'via header' });
    expect(withHeader.json.result.structuredContent.error.code).toBe('auth.required');
    const withArgument = await discuss({ slug, body: 'via argument', token: annToken });
    expect(withArgument.json.result.structuredContent).toMatchObject({ ok: true });
  });
});

describe('hostile arguments', () => {
  /** Wrong types, missing and oversized fields, against a real room (so checks past existence run) and unknown ones. */
  const hostile = (): Record<string, unknown>[] => [
    {},
    { slug: 42 },
    { slug: '' },
    { slug: 'zzzzzzzzzz', token: 't_x' },
    { slug: '../../etc/passwd', token: ['a'] },
    { slug, token: { nested: true }, idempotency_key: 7 },
    {
      slug,
      token: annToken,
      choice: { a: { b: [1, { c: null }] } },
      wait_seconds: 0,
      decision: -1,
      since: 'x',
      include: 'all',
      body: 9,
    },
    {
      slug,
      token: annToken,
      code: null,
      webhook_id: 1,
      settings: 'no',
      config: [1],
      options: 'alpha',
      wait_seconds: -1,
    },
    { slug: 'x'.repeat(10_000) },
  ];

  it('never answers a tool call with a server error or a JSON-RPC error', async () => {
    for (const path of ['/mcp', '/mcp/host']) {
      const list = await rpc(`${svc.base}${path}`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      for (const { name } of list.json.result.tools as { name: string }[]) {
        for (const args of hostile()) {
          const label = `${name} ${JSON.stringify(args).slice(0, 120)}`;
          const answer = await rpc(
            `${svc.base}${path}`,
            JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }),
          );
          expect(answer.status, label).toBe(200);
          expect(answer.json.error, label).toBeUndefined();
          expect(answer.json.result.structuredContent?.error?.code, label).not.toBe('internal.error');
        }
      }
    }
  });
});
