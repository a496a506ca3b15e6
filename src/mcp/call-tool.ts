/**
 * One tool call, the MCP twin of a REST route (http/routes.ts): arguments → credentials and input →
 * the same checks in the same order (room existence, idempotency key, the operation's zod input with
 * its deferred validation) → the operation's handler. Results carry `ok: true`; anything REST would
 * answer with an error envelope is an `isError` result carrying that envelope (docs/agents.md, MCP).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { nearestKey, unknownKeysError } from '../domain/unknown-keys.js';
import { envelope, invalidInput, type ProtocolError } from '../errors.js';
import { logRefusal, toProtocolError } from '../http/errors.js';
import { IDEMPOTENCY_KEY, parseOperationInput } from '../operations/input.js';
import { refuseUnrepresentable } from '../operations/json-safety.js';
import type { Services } from '../operations/services.js';
import type { RequestContext } from '../operations/types.js';
import { roomNotFound } from '../runtime/registry.js';
import type { ToolSpec } from './catalog.js';
import { forMcp } from './error-wording.js';
import { runOperation } from '../operations/run.js';

/** What the HTTP exchange carrying the call contributes. */
export interface CallOrigin {
  services: Services;
  catalogPath: string;
  requestId: string;
  clientIp: string;
  /** The X-Mandate header, used when the request has no `_meta.mandate`. */
  mandateHeader: string | undefined;
  log: FastifyBaseLogger;
  /**
   * The per-credential limit refused this call (the MCP route counts it with the call's other budgets,
   * http/rate-limit-hook.ts): the tool answers this error, as any refusal of a tool call.
   */
  refused?: ProtocolError;
}

type Arguments = Record<string, unknown>;

function optionalString(args: Arguments, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || typeof value === 'string') return value;
  throw invalidInput(name, `The argument "${name}" must be a string.`, 'wrong_type');
}

/** Tool arguments as the operation's input fields: renamed, fixed and implied fields applied. */
function inputFields(tool: ToolSpec, args: Arguments): Arguments {
  const map = tool.arguments;
  const fields: Arguments = {};
  for (const [name, value] of Object.entries(args)) fields[map.rename?.[name] ?? name] = value;
  for (const [name, implied] of Object.entries(map.impliedBy ?? {})) {
    if (args[name] === undefined) continue;
    for (const [field, value] of Object.entries(implied)) fields[field] ??= value;
  }
  return { ...fields, ...map.fixed };
}

/** Every argument the tool declares (its input schema's properties, credentials included). */
function argumentNames(tool: ToolSpec): string[] {
  return Object.keys((tool.inputSchema.properties ?? {}) as Record<string, unknown>);
}

function argumentName(tool: ToolSpec): (field: string) => string {
  const rename = Object.entries(tool.arguments.rename ?? {});
  return (field) => rename.find(([, to]) => to === field)?.[0] ?? field;
}

/** Path parameters are arguments on MCP; the room-existence check (docs/architecture.md, Errors) needs them first. */
async function checkPathArguments(tool: ToolSpec, fields: Arguments, origin: CallOrigin): Promise<void> {
  const nameOf = argumentName(tool);
  for (const [, param] of tool.operation.path.matchAll(/\{(\w+)\}/g)) {
    const value = fields[param!];
    if (typeof value !== 'string' || value === '') {
      const arg = nameOf(param!);
      // A missing argument is most often a misspelt one: name that instead (docs/agents.md, The REST loop).
      const allowed = argumentNames(tool);
      const unknown = Object.keys(fields).filter(
        (name) =>
          !allowed.includes(nameOf(name)) &&
          !(name in (tool.arguments.fixed ?? {})) &&
          nearestKey(nameOf(name), allowed) !== undefined,
      );
      if (value === undefined && unknown.length > 0) {
        const keys = unknown.map(nameOf);
        throw unknownKeysError(keys[0]!, keys, allowed, `the ${tool.name} tool`);
      }
      throw invalidInput(
        arg,
        `The argument "${arg}" is required and must be a string (the ${tool.name} tool).`,
        'wrong_type',
      );
    }
  }
  const slug = fields.slug;
  if (typeof slug === 'string' && tool.operation.path.includes('{slug}')) {
    if (!(await origin.services.registry.exists(slug))) throw roomNotFound(slug);
  }
}

function jsonResult(body: Record<string, unknown>, isError: boolean): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

/** What the JSON-RPC request carries besides the arguments. */
export interface ToolCallContext {
  /** `params._meta` (a mandate travels here). */
  meta?: Record<string, unknown> | undefined;
  /** Aborted when the request is cancelled or its client goes away. */
  signal?: AbortSignal | undefined;
}

export async function callTool(
  tool: ToolSpec,
  args: Arguments,
  call: ToolCallContext,
  origin: CallOrigin,
): Promise<CallToolResult> {
  const started = performance.now();
  const observed = (code: string | null) =>
    origin.services.observer?.toolCall(tool.name, code, (performance.now() - started) / 1000);
  try {
    if (origin.refused) throw origin.refused;
    refuseUnrepresentable(args);
    const token = optionalString(args, 'token');
    const idempotencyKey = tool.operation.mutating ? optionalString(args, 'idempotency_key') : undefined;
    // The idempotency fingerprint is over the arguments without the key and the token (docs/agents.md, The REST loop).
    const { token: _token, idempotency_key: _key, ...fingerprintSource } = args;
    const rest: Arguments = { ...fingerprintSource };
    let password: string | undefined;
    if (tool.arguments.passwordCredential) {
      password = optionalString(rest, 'password');
      delete rest.password;
    }
    const fields = inputFields(tool, rest);
    await checkPathArguments(tool, fields, origin);
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw invalidInput(
        'idempotency_key',
        'idempotency_key must be 1..255 visible ASCII characters.',
        'invalid_value',
      );
    }
    const { input, invalid } = parseOperationInput(tool.operation, fields, argumentName(tool), argumentNames(tool));
    const mandate = typeof call.meta?.mandate === 'string' ? call.meta.mandate : origin.mandateHeader;
    const slug = typeof fields.slug === 'string' ? fields.slug : '-';
    const ctx: RequestContext = {
      services: origin.services,
      credentials: { bearer: token, mandate, password },
      idempotencyKey,
      requestId: origin.requestId,
      clientIp: origin.clientIp,
      transport: 'mcp',
      operationScope: `MCP ${origin.catalogPath} ${tool.name} ${slug}`,
      fingerprintSource,
      headers: {},
      replayed: false,
      responseHeaders: {},
      ...(call.signal ? { signal: call.signal } : {}),
    };
    const result = await runOperation(tool.operation, ctx, input, invalid);
    observed(null);
    return jsonResult('ok' in result ? result : { ok: true, ...result }, false);
  } catch (error) {
    const protocol = toProtocolError(error);
    observed(protocol.code);
    if (protocol.status >= 500)
      origin.log.error({ err: error, tool: tool.name, error_code: protocol.code }, 'tool call failed');
    else logRefusal(origin.log, protocol, { tool: tool.name });
    return jsonResult({ error: envelope(forMcp(protocol.toSpec()), origin.requestId).error }, true);
  }
}
