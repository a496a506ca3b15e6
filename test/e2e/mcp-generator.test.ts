/**
 * The catalog generator and the tool-call adapter on a synthetic operation table: operations that do
 * not exist yet (wait, unregister_webhook) appear as soon as an operation names them, with the
 * declared argument mapping; arguments become credentials and input exactly as REST headers and
 * bodies do.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invalidInput } from '../../src/errors.js';
import { type CallOrigin, callTool } from '../../src/mcp/call-tool.js';
import { buildCatalog, type ToolSpec } from '../../src/mcp/catalog.js';
import type { Services } from '../../src/operations/services.js';
import type { AnyOperation, RequestContext } from '../../src/operations/types.js';

const slug = z.string().min(1).max(64);
const seen: { ctx: RequestContext; input: any; invalid: unknown }[] = [];

function operation(overrides: Partial<AnyOperation> & Pick<AnyOperation, 'name' | 'method' | 'path' | 'input'>) {
  return {
    summary: overrides.name,
    description: `The ${overrides.name} operation.`,
    tag: 'rooms',
    inputSource: 'body',
    output: z.unknown(),
    mutating: false,
    async handle(ctx: RequestContext, input: unknown, invalid?: unknown) {
      seen.push({ ctx, input, invalid });
      if (invalid) throw invalid;
      return { echoed: input };
    },
    ...overrides,
  } as AnyOperation;
}

const nextAction = operation({
  name: 'nextAction',
  method: 'GET',
  path: '/api/rooms/{slug}/next-action',
  inputSource: 'query',
  input: z.object({
    slug,
    wait: z.number().min(0).optional(),
    for: z.enum(['my_choice', 'activity', 'completion']).optional(),
    since_seq: z.number().int().min(0).optional(),
  }),
  mcp: { tool: 'wait', catalogs: ['participant'], readOnly: true },
});
const unregisterWebhook = operation({
  name: 'unregisterWebhook',
  method: 'DELETE',
  path: '/api/rooms/{slug}/webhooks/{id}',
  inputSource: 'none',
  input: z.object({ slug, id: z.string().min(1) }),
  mutating: true,
  mcp: { tool: 'unregister_webhook', catalogs: ['host'] },
});
const readRoom = operation({
  name: 'getRoom',
  method: 'GET',
  path: '/api/rooms/{slug}',
  input: z.object({ slug }).meta({ id: 'SyntheticReadRequest' }),
  mcp: { tool: 'read_room', catalogs: ['participant'], readOnly: true },
});
const discuss = operation({
  name: 'discuss',
  method: 'POST',
  path: '/api/rooms/{slug}/discuss',
  input: z.object({ slug, body: z.string().min(1) }),
  mutating: true,
  deferValidation: true,
  mcp: { tool: 'discuss', catalogs: ['participant'] },
});
const noTool = operation({
  name: 'deleteRoom',
  method: 'DELETE',
  path: '/api/rooms/{slug}',
  input: z.object({ slug }),
});
const TABLE = [nextAction, unregisterWebhook, readRoom, discuss, noTool];

const rooms = new Set(['room1']);
const origin: CallOrigin = {
  services: { registry: { exists: async (s: string) => rooms.has(s) } } as unknown as Services,
  catalogPath: '/mcp',
  requestId: 'req-1',
  clientIp: '127.0.0.1',
  mandateHeader: undefined,
  log: { error: () => {}, info: () => {} } as unknown as CallOrigin['log'],
};

function tool(catalog: 'participant' | 'host', name: string): ToolSpec {
  const found = buildCatalog(catalog, TABLE).find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

async function lastCall(spec: ToolSpec, args: Record<string, unknown>, meta?: Record<string, unknown>, from = origin) {
  seen.length = 0;
  const result = await callTool(spec, args, { meta }, from);
  return { result, call: seen[0] };
}

describe('catalog generation', () => {
  it('turns every operation with an mcp field into a tool on its catalogs, and nothing else', () => {
    expect(buildCatalog('participant', TABLE).map((t) => t.name)).toEqual(['wait', 'read_room', 'discuss']);
    expect(buildCatalog('host', TABLE).map((t) => t.name)).toEqual(['unregister_webhook', 'wait_outcome']);
    expect(buildCatalog('host', [readRoom]).map((t) => t.name)).toEqual([]);
  });

  it('spells arguments the way the tool reference does', () => {
    const wait = tool('participant', 'wait').inputSchema as any;
    expect(Object.keys(wait.properties)).toEqual(['slug', 'wait_seconds', 'for', 'since', 'token']);
    expect(tool('host', 'wait_outcome').description).toContain(
      'Mirrors GET /api/rooms/{slug}/next-action?for=completion',
    );
    expect(tool('participant', 'wait').description).toContain('The nextAction operation.');
    expect(tool('host', 'wait_outcome').description).not.toContain('The nextAction operation.');
    const waitOutcome = tool('host', 'wait_outcome').inputSchema as any;
    expect(Object.keys(waitOutcome.properties)).toEqual(['slug', 'wait_seconds', 'since_seq', 'token']);
    const unregister = tool('host', 'unregister_webhook').inputSchema as any;
    expect(unregister.required).toEqual(['slug', 'webhook_id']);
    expect(Object.keys(unregister.properties)).toEqual(['slug', 'webhook_id', 'token', 'idempotency_key']);
    const read = tool('participant', 'read_room').inputSchema as any;
    expect(read).toMatchObject({ type: 'object', required: ['slug'] });
    expect(read.$ref).toBeUndefined();
    expect(Object.keys(read.properties)).toEqual(['slug', 'password', 'token']);
  });
});

describe('tool calls', () => {
  it('maps renamed, implied and fixed arguments onto the operation input', async () => {
    const activity = await lastCall(tool('participant', 'wait'), { slug: 'room1', since: 4, wait_seconds: 0 });
    expect(activity.call?.input).toEqual({ slug: 'room1', since_seq: 4, wait: 0, for: 'activity' });
    const bare = await lastCall(tool('participant', 'wait'), { slug: 'room1' });
    expect(bare.call?.input).toEqual({ slug: 'room1' });
    const completion = await lastCall(tool('host', 'wait_outcome'), { slug: 'room1', since_seq: 2, for: 'activity' });
    expect(completion.call?.input).toEqual({ slug: 'room1', since_seq: 2, for: 'completion' });
    const unregister = await lastCall(tool('host', 'unregister_webhook'), { slug: 'room1', webhook_id: 'wh_1' });
    expect(unregister.call?.input).toEqual({ slug: 'room1', id: 'wh_1' });
  });

  it('turns token, password and mandate into credentials, never into input', async () => {
    const read = await lastCall(tool('participant', 'read_room'), { slug: 'room1', token: 't_x', password: 'pw' });
    expect(read.call?.ctx.credentials).toEqual({ bearer: 't_x', mandate: undefined, password: 'pw' });
    expect(read.call?.input).toEqual({ slug: 'room1' });
    expect(read.call?.ctx.transport).toBe('mcp');
    const fromHeader = await lastCall(tool('participant', 'read_room'), { slug: 'room1' }, undefined, {
      ...origin,
      mandateHeader: 'header.jws',
    });
    expect(fromHeader.call?.ctx.credentials.mandate).toBe('header.jws');
    const fromMeta = await lastCall(
      tool('participant', 'read_room'),
      { slug: 'room1' },
      { mandate: 'meta.jws' },
      {
        ...origin,
        mandateHeader: 'header.jws',
      },
    );
    expect(fromMeta.call?.ctx.credentials.mandate).toBe('meta.jws');
  });

  it('hands the request cancellation signal to the operation (long-polls release on disconnect)', async () => {
    const controller = new AbortController();
    seen.length = 0;
    await callTool(tool('participant', 'wait'), { slug: 'room1' }, { signal: controller.signal }, origin);
    expect(seen[0]?.ctx.signal).toBe(controller.signal);
  });

  it('scopes idempotency by catalog, tool and slug, fingerprinting the arguments without key and token', async () => {
    const args = { slug: 'room1', body: 'hi', token: 't_x', idempotency_key: 'k-1' };
    const { result, call } = await lastCall(tool('participant', 'discuss'), args);
    expect(call?.ctx.idempotencyKey).toBe('k-1');
    expect(call?.ctx.operationScope).toBe('MCP /mcp discuss room1');
    expect(call?.ctx.fingerprintSource).toEqual({ slug: 'room1', body: 'hi' });
    expect(result.structuredContent).toEqual({ ok: true, echoed: { slug: 'room1', body: 'hi' } });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    expect(result.isError).toBeUndefined();
  });

  it('answers bad calls with the REST error envelope as an isError result', async () => {
    const missingRoom = await lastCall(tool('participant', 'discuss'), { slug: 'gone', body: 'hi' });
    expect(missingRoom.call).toBeUndefined();
    expect(missingRoom.result.isError).toBe(true);
    expect(missingRoom.result.structuredContent).toMatchObject({
      error: { code: 'room.not_found', request_id: 'req-1' },
    });

    const deferred = await lastCall(tool('participant', 'discuss'), { slug: 'room1', body: '' });
    expect(deferred.call?.input).toEqual({ slug: 'room1' });
    expect(deferred.result.structuredContent).toMatchObject({
      error: { code: 'input.invalid', details: { field: 'body' } },
    });

    const renamed = await lastCall(tool('host', 'unregister_webhook'), { slug: 'room1' });
    expect(renamed.result.structuredContent).toMatchObject({
      error: { code: 'input.invalid', details: { field: 'webhook_id' } },
    });

    const badKey = await lastCall(tool('participant', 'discuss'), { slug: 'room1', body: 'x', idempotency_key: 'a b' });
    expect(badKey.result.structuredContent).toMatchObject({
      error: { code: 'input.invalid', details: { field: 'idempotency_key' } },
    });

    const badToken = await lastCall(tool('participant', 'discuss'), { slug: 'room1', body: 'x', token: 7 });
    expect(badToken.result.structuredContent).toMatchObject({
      error: { code: 'input.invalid', details: { field: 'token' } },
    });
  });

  it('reports unexpected failures as internal.error without leaking them', async () => {
    const crashing = { ...discuss, handle: async () => Promise.reject(new Error('secret detail')) } as AnyOperation;
    const spec = buildCatalog('participant', [crashing])[0]!;
    const { result } = await lastCall(spec, { slug: 'room1', body: 'x' });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).not.toContain('secret detail');
    expect(result.structuredContent).toMatchObject({ error: { code: 'internal.error', request_id: 'req-1' } });
    const protocol = { ...discuss, handle: async () => Promise.reject(invalidInput('x', 'bad x')) } as AnyOperation;
    const { result: envelope } = await lastCall(buildCatalog('participant', [protocol])[0]!, {
      slug: 'room1',
      body: 'x',
    });
    expect(envelope.structuredContent).toEqual({
      error: { code: 'input.invalid', message: 'bad x', details: { field: 'x' }, request_id: 'req-1' },
    });
  });
});
