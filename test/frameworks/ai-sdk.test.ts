/**
 * The Vercel AI SDK's MCP client (@ai-sdk/mcp) on both catalogs: the tools it builds list every tool,
 * and calling them through their own `execute` runs a room of every ballot kind to a verified
 * outcome; a refusal comes back as an isError result carrying the envelope and its code.
 */
import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { type CallTool, frameworkSuite } from '../support/framework-rooms.js';

type AiTools = Awaited<ReturnType<MCPClient['tools']>>;

/** A call through the tool object the SDK built: its execute, as the SDK's agent loop runs it. */
function caller(tools: AiTools): CallTool {
  return async (name, args) => {
    const tool = tools[name];
    if (!tool?.execute) throw new Error(`the AI SDK built no executable ${name} tool`);
    const result = (await tool.execute(args, { toolCallId: `call-${name}`, messages: [], context: {} })) as {
      isError?: boolean;
      structuredContent?: unknown;
    };
    return { isError: result.isError === true, body: result.structuredContent };
  };
}

frameworkSuite('Vercel AI SDK (@ai-sdk/mcp)', async (base) => {
  const host = await createMCPClient({ transport: { type: 'http', url: `${base}/mcp/host` } });
  const participant = await createMCPClient({ transport: { type: 'http', url: `${base}/mcp` } });
  const hostTools = await host.tools();
  const participantTools = await participant.tools();
  return {
    names: { host: Object.keys(hostTools), participant: Object.keys(participantTools) },
    tools: { host: caller(hostTools), participant: caller(participantTools) },
    close: async () => {
      await host.close();
      await participant.close();
    },
  };
});
