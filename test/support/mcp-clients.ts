/**
 * MCP clients for end-to-end tests, one per protocol era, behind one small interface: the official v2
 * client pinned to 2026-07-28 (it must negotiate through server/discover) and the v1 SDK client, whose
 * newest revision is the stateless-compatible 2025-11-25.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type Era = '2026-07-28' | '2025-11-25';

export interface ToolOutcome {
  isError: boolean;
  /** structuredContent, checked to equal the JSON text of content[0]. */
  body: any;
}

export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: { type: string; properties?: Record<string, any>; required?: string[] };
  outputSchema?: Record<string, any> | undefined;
  annotations?:
    | {
        readOnlyHint?: boolean | undefined;
        destructiveHint?: boolean | undefined;
        idempotentHint?: boolean | undefined;
        openWorldHint?: boolean | undefined;
      }
    | undefined;
}

export interface McpSession {
  era: Era;
  negotiatedVersion: string | undefined;
  serverInfo: { name: string; version: string } | undefined;
  instructions: string | undefined;
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** The raw call result, for protocol-level assertions (JSON-RPC errors reject). */
  callRaw(name: string, args: Record<string, unknown>): Promise<unknown>;
  tools(): Promise<ListedTool[]>;
  close(): Promise<void>;
}

function outcomeOf(result: any): ToolOutcome {
  const text = result?.content?.[0];
  if (text?.type !== 'text') throw new Error(`tool result without a text item: ${JSON.stringify(result)}`);
  const parsed = JSON.parse(text.text);
  if (JSON.stringify(parsed) !== JSON.stringify(result.structuredContent)) {
    throw new Error('content[0].text and structuredContent differ');
  }
  return { isError: result.isError === true, body: result.structuredContent };
}

const CLIENT_INFO = { name: 'conclave-e2e', version: '0.0.0' };

export async function connectModern(url: string): Promise<McpSession> {
  const client = new ModernClient(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(url)));
  if (client.getProtocolEra() !== 'modern') throw new Error(`expected the modern era, got ${client.getProtocolEra()}`);
  const callRaw = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
  return {
    era: '2026-07-28',
    negotiatedVersion: client.getNegotiatedProtocolVersion(),
    serverInfo: client.getServerVersion(),
    instructions: client.getInstructions(),
    callRaw,
    call: async (name, args) => outcomeOf(await callRaw(name, args)),
    tools: async () => (await client.listTools()).tools as ListedTool[],
    close: () => client.close(),
  };
}

export async function connectLegacy(url: string): Promise<McpSession> {
  const client = new LegacyClient(CLIENT_INFO);
  await client.connect(new LegacyTransport(new URL(url)));
  const callRaw = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
  return {
    era: '2025-11-25',
    negotiatedVersion: (client.transport as LegacyTransport | undefined)?.protocolVersion,
    serverInfo: client.getServerVersion(),
    instructions: client.getInstructions(),
    callRaw,
    call: async (name, args) => outcomeOf(await callRaw(name, args)),
    tools: async () => (await client.listTools()).tools as ListedTool[],
    close: () => client.close(),
  };
}

export const ERAS: readonly { era: Era; connect: (url: string) => Promise<McpSession> }[] = [
  { era: '2026-07-28', connect: connectModern },
  { era: '2025-11-25', connect: connectLegacy },
];

/** A successful tool call's result object; fails loudly with the envelope otherwise. */
export async function ok(session: McpSession, name: string, args: Record<string, unknown>): Promise<any> {
  const outcome = await session.call(name, args);
  if (outcome.isError) throw new Error(`${name} failed over MCP: ${JSON.stringify(outcome.body)}`);
  return outcome.body;
}

/** One raw JSON-RPC POST, for protocol-level checks the clients would hide. */
export async function rpc(
  url: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; contentType: string | null; text: string; json: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  const data = contentType?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6)
    : text;
  let json: unknown = null;
  try {
    json = data ? JSON.parse(data) : null;
  } catch {
    json = null;
  }
  return { status: response.status, headers: response.headers, contentType, text, json };
}

/** MCP `list_rooms` (the host catalog) called with these arguments and `_meta`: its structured result. */
export async function listRoomsOverMcp(
  base: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
): Promise<any> {
  const res = await rpc(
    `${base}/mcp/host`,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_rooms', arguments: args, ...(meta ? { _meta: meta } : {}) },
    }),
    { 'mcp-protocol-version': '2025-11-25' },
  );
  return res.json.result.structuredContent;
}

/** The slugs MCP `list_rooms` lists for a mandate. */
export async function listRoomsByMandate(base: string, mandate: string): Promise<string[]> {
  const listed = await listRoomsOverMcp(base, {}, { mandate });
  return listed.rooms.map((r: { slug: string }) => r.slug);
}
