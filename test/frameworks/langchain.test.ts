/**
 * LangChain's MCP adapter (@langchain/mcp-adapters) on both catalogs. The adapter simplifies every
 * input schema for language models and validates each call against the simplified schema before
 * sending it, so this is where a ballot shape the adapter cannot carry would be refused
 * ("Received tool input did not match expected schema"). Through the tools it built — their own
 * invoke, validation included — a room of every ballot kind runs to a verified outcome; a refusal
 * comes back as the adapter's ToolException, whose message carries the envelope and its code.
 */
import type { StructuredToolInterface } from '@langchain/core/tools';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { type CallTool, frameworkSuite } from '../support/framework-rooms.js';

const ERROR_PREFIX = 'returned an error: ';

/** A call through the LangChain tool object: invoke validates the arguments, then calls the server. */
function caller(tools: StructuredToolInterface[]): CallTool {
  return async (name, args) => {
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`the adapter built no ${name} tool`);
    try {
      const content = (await tool.invoke(args)) as { text: string; structuredContent?: unknown };
      return { isError: false, body: content.structuredContent ?? JSON.parse(content.text) };
    } catch (error) {
      // An isError result: the adapter throws a ToolException whose message ends with the result's text.
      const message = String((error as Error).message);
      const at = message.indexOf(ERROR_PREFIX);
      if ((error as Error).name !== 'ToolException' || at < 0) throw error;
      return { isError: true, body: JSON.parse(message.slice(at + ERROR_PREFIX.length)) };
    }
  };
}

frameworkSuite('LangChain (@langchain/mcp-adapters)', async (base) => {
  const client = new MultiServerMCPClient({
    mcpServers: {
      host: { transport: 'http', url: `${base}/mcp/host` },
      participant: { transport: 'http', url: `${base}/mcp` },
    },
    throwOnLoadError: true,
  });
  const host = await client.getTools('host');
  const participant = await client.getTools('participant');
  return {
    names: { host: host.map((tool) => tool.name), participant: participant.map((tool) => tool.name) },
    tools: { host: caller(host), participant: caller(participant) },
    close: () => client.close(),
  };
});
