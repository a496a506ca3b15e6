/**
 * The MCP server of one catalog for one HTTP exchange. The SDK's dual-era handler asks for a fresh
 * instance per request (both eras are stateless here), so this only wires prebuilt tool specs to
 * callTool; arguments are checked by the operation's own schema inside callTool, not by the SDK, so
 * that bad input gets the protocol's error envelope rather than a JSON-RPC error.
 */
import { McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Catalog } from '../operations/types.js';
import { type CallOrigin, callTool } from './call-tool.js';
import type { ToolSpec } from './catalog.js';
import { CATALOG_INSTRUCTIONS } from './descriptions.js';
import { MCP_PROTOCOL_VERSIONS } from './versions.js';

type Arguments = Record<string, unknown>;

/** Advertises the tool's JSON Schema and accepts any argument object as-is (the bench's SDK floor uses it too). */
export function passThroughSchema(json: Record<string, unknown>): StandardSchemaWithJSON<Arguments> {
  return {
    '~standard': {
      version: 1,
      vendor: 'conclave',
      validate: (value) => ({
        value: typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Arguments) : {},
      }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

export interface CatalogServerSpec {
  catalog: Catalog;
  version: string;
  tools: readonly ToolSpec[];
}

/** What the HTTP exchange a server instance is built for contributes to it. */
export interface McpExchange {
  origin: CallOrigin;
  /** The tool a `tools/call` message names; undefined for any other message. */
  toolName: string | undefined;
}

/**
 * The instance for one exchange (undefined when the SDK builds one for a body it will refuse unread,
 * such as one that is not JSON: no tool runs then). A `tools/call` of a catalog tool registers that
 * tool only: the SDK looks up the called tool and nothing else, and registering the whole catalog was
 * most of the instance's cost (docs/performance.md, MCP close to REST). Every other message (the
 * listing, initialize, a call of an unknown name) gets the whole catalog, as before.
 */
export function catalogServerFactory(spec: CatalogServerSpec): (exchange: McpExchange | undefined) => McpServer {
  // Built once per catalog: the SDK asks for a fresh server per exchange, but nothing a tool is
  // registered with (schemas, descriptions, annotations) changes between exchanges.
  const tools = spec.tools.map((tool) => ({
    tool,
    config: {
      title: tool.title,
      description: tool.description,
      inputSchema: passThroughSchema(tool.inputSchema),
      outputSchema: passThroughSchema(tool.outputSchema),
      annotations: tool.annotations,
    },
  }));
  const byName = new Map(tools.map((entry) => [entry.tool.name, [entry]]));
  const info = { name: 'conclave', version: spec.version };
  const options = {
    capabilities: { tools: { listChanged: false } },
    instructions: CATALOG_INSTRUCTIONS[spec.catalog],
    // Without this the SDK also serves 2025-06-18, 2025-03-26 and older; with it `initialize` answers
    // any other requested version with 2025-11-25, and a request whose MCP-Protocol-Version header
    // names another version is refused with 400, as the MCP specification prescribes.
    supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
  };
  return (exchange) => {
    const server = new McpServer(info, options);
    const registered = (exchange?.toolName !== undefined && byName.get(exchange.toolName)) || tools;
    for (const { tool, config } of registered) {
      server.registerTool(tool.name, config, (args, ctx) => {
        if (!exchange) throw new Error('MCP tool called outside an HTTP exchange');
        return callTool(tool, args, { meta: ctx.mcpReq._meta, signal: ctx.mcpReq.signal }, exchange.origin);
      });
    }
    return server;
  };
}
