/**
 * tools/list on each endpoint, in both eras, is exactly the 07-mcp.md §5 catalog restricted to the
 * tools whose operation exists in the table today. The tables below are the spec's, not the code's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations/table.js';
import { ERAS, type ListedTool } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const SPEC_CATALOGS = {
  participant: [
    'join_room',
    'read_room',
    'discuss',
    'propose',
    'choose',
    'abstain',
    'wait',
    'outcome',
    'ask',
    'start_choosing',
    'close_room',
  ],
  host: [
    'ask',
    'start_choosing',
    'close_room',
    'create_room',
    'list_rooms',
    'invite_to_room',
    'list_invites',
    'revoke_invite',
    'update_room_settings',
    'list_decisions',
    'wait_outcome',
    'register_webhook',
    'unregister_webhook',
    'list_webhooks',
    'list_events',
  ],
} as const;

/** The tools the brief names as existing when the MCP transport was written; later operations only add. */
const AT_LEAST = {
  participant: [
    'join_room',
    'read_room',
    'discuss',
    'propose',
    'choose',
    'abstain',
    'outcome',
    'ask',
    'start_choosing',
    'close_room',
  ],
  host: ['create_room', 'ask', 'start_choosing', 'close_room', 'list_decisions'],
};

const HOST_ONLY = SPEC_CATALOGS.host.filter((tool) => !(SPEC_CATALOGS.participant as readonly string[]).includes(tool));
const READ_ONLY = new Set([
  'list_rooms',
  'read_room',
  'wait',
  'outcome',
  'list_decisions',
  'wait_outcome',
  'list_invites',
  'list_webhooks',
  'list_events',
]);
/** wait_outcome is the host's view of the wait operation (GET /next-action?for=completion). */
const BASE_TOOL: Record<string, string> = { wait_outcome: 'wait' };

function operationOf(tool: string) {
  const base = BASE_TOOL[tool] ?? tool;
  return OPERATIONS.find((operation) => operation.mcp?.tool === base);
}

function expectedCatalog(catalog: keyof typeof SPEC_CATALOGS): string[] {
  return SPEC_CATALOGS[catalog].filter((tool) => operationOf(tool) !== undefined).sort();
}

describe.each(ERAS)('MCP catalogs ($era)', ({ connect }) => {
  let svc: RunningService;
  const listed: Record<string, ListedTool[]> = {};
  const instructions: Record<string, string | undefined> = {};

  beforeAll(async () => {
    svc = await startService();
    for (const [catalog, path] of [
      ['participant', '/mcp'],
      ['host', '/mcp/host'],
    ] as const) {
      const session = await connect(`${svc.base}${path}`);
      listed[catalog] = await session.tools();
      instructions[catalog] = session.instructions;
      await session.close();
    }
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('lists exactly the spec catalog for the operations that exist', () => {
    for (const catalog of ['participant', 'host'] as const) {
      const names = listed[catalog]!.map((tool) => tool.name).sort();
      expect(names).toEqual(expectedCatalog(catalog));
      expect(names).toEqual(expect.arrayContaining(AT_LEAST[catalog]));
    }
  });

  it('keeps host tools off the participant catalog', () => {
    const names = listed.participant!.map((tool) => tool.name);
    for (const tool of ['create_room', 'list_decisions', 'wait_outcome', 'register_webhook', ...HOST_ONLY]) {
      expect(names).not.toContain(tool);
    }
  });

  it('describes every tool for a cold reader, with credential and idempotency arguments', () => {
    for (const tool of [...listed.participant!, ...listed.host!]) {
      const operation = operationOf(tool.name)!;
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description, tool.name).toContain(
        operation.mcpOnly ? 'MCP only' : `Mirrors ${operation.method} ${operation.path}`,
      );
      expect(tool.inputSchema.type).toBe('object');
      const properties = tool.inputSchema.properties ?? {};
      expect(properties.token, tool.name).toMatchObject({ type: 'string' });
      expect(tool.inputSchema.required ?? [], tool.name).not.toContain('token');
      expect('idempotency_key' in properties, tool.name).toBe(operation.mutating);
      // A mandate travels in _meta.mandate, never as an argument; schemas are self-contained.
      expect(Object.keys(properties), tool.name).not.toContain('mandate');
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toMatch(/\$ref/);
      if (operation.path.includes('{slug}')) expect(tool.inputSchema.required, tool.name).toContain('slug');
      else expect(properties.slug, tool.name).toBeUndefined();
      expect(tool.annotations?.readOnlyHint === true, tool.name).toBe(READ_ONLY.has(tool.name));
    }
  });

  it('names the invite token by the prefix invites really carry', () => {
    const join = listed.participant!.find((tool) => tool.name === 'join_room')!;
    expect(join.description).toContain('it_…');
    expect(join.inputSchema.properties?.invite?.description).toContain('(it_…)');
    expect(JSON.stringify(join)).not.toContain('inv_');
  });

  it('sends a host to /mcp for reading and voting, and describes the error envelope once per catalog', () => {
    const host = instructions.host ?? '';
    expect(host).toMatch(/Reading the room, discussing and voting are on the participant catalog at \/mcp\b/);
    for (const tool of ['read_room', 'choose', 'wait']) expect(host).toContain(tool);
    expect(host).toContain('creator_token');
    for (const text of [host, instructions.participant ?? '']) {
      expect(text).toContain('isError: true');
      expect(text).toContain('{error: {code, message, hint?, details?, request_id}}');
    }
  });

  it('takes the read password as an argument on read tools only', () => {
    const byName = new Map([...listed.participant!, ...listed.host!].map((tool) => [tool.name, tool]));
    for (const tool of ['read_room', 'outcome', 'list_decisions']) {
      expect(byName.get(tool)?.inputSchema.properties?.password, tool).toMatchObject({ type: 'string' });
    }
    expect(byName.get('choose')?.inputSchema.properties?.password).toBeUndefined();
  });
});

describe('MCP in discovery', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('advertises both endpoints and both eras', async () => {
    const discovery = await call(svc.base, 'GET', '/.well-known/svc.json');
    expect(discovery.body.transports).toMatchObject({
      mcp: `${svc.base}/mcp`,
      mcp_host: `${svc.base}/mcp/host`,
      mcp_protocol_versions: ['2026-07-28', '2025-11-25'],
    });
  });

  it('lets browser clients send the MCP request headers', async () => {
    const preflight = await fetch(`${svc.base}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version, mcp-method, mcp-name',
      },
    });
    expect(preflight.status).toBe(204);
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const name of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) expect(allowed).toContain(name);
  });
});
