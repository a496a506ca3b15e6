/**
 * The OpenAI Agents SDK (@openai/agents) on both catalogs, through its own MCP server class and its
 * tool conversion with strict schemas on (`convertSchemasToStrict`): every tool must convert to a
 * strict schema (all properties required, no open objects, additionalProperties false) instead of
 * falling back to a non-strict one. The calls are what a model bound by those schemas sends — every
 * property present, null where it has nothing to say — and go through each tool's own invoke, which
 * strips the nulls before calling the server. A room of every ballot kind runs to a verified
 * outcome; a refusal comes back as the result text carrying the envelope and its code.
 */
import { type FunctionTool, getAllMcpTools, MCPServerStreamableHttp, RunContext } from '@openai/agents';
import { expect } from 'vitest';
import { type CallTool, frameworkSuite } from '../support/framework-rooms.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The branches a value may take: an optional property's schema is anyOf [schema, {type: null}]. */
function branches(schema: Json): Json[] {
  return Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]).flatMap(branches) : [schema];
}

/** The arguments as a strict model writes them: every property of every object present, null when unused. */
function strictArguments(schema: Json, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = branches(schema).find((branch) => branch.type === 'array')?.items as Json | undefined;
    return items ? value.map((item) => strictArguments(items, item)) : value;
  }
  if (!isObject(value)) return value;
  const object = branches(schema).find((branch) => isObject(branch.properties));
  if (!object) return value;
  const properties = object.properties as Record<string, Json>;
  return Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [
      key,
      key in value ? strictArguments(property, value[key]) : null,
    ]),
  );
}

type Tool = FunctionTool<unknown>;

/** A call through the SDK's tool: invoke parses the model's JSON, strips the strict nulls, calls the server. */
function caller(tools: Tool[]): CallTool {
  const context = new RunContext({});
  return async (name, args) => {
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`the Agents SDK built no ${name} tool`);
    const input = JSON.stringify(strictArguments(tool.parameters as Json, args));
    const output = (await tool.invoke(context, input)) as { type: string; text: string } | string;
    if (typeof output === 'string') throw new Error(`${name} failed in the SDK: ${output}`);
    const body = JSON.parse(output.text);
    return { isError: isObject(body) && 'error' in body && !('ok' in body), body };
  };
}

/** Each catalog through the SDK's MCP server class and its strict conversion. */
async function strictTools(url: string, name: string) {
  const server = new MCPServerStreamableHttp({ url, name });
  await server.connect();
  const tools = (await getAllMcpTools({
    mcpServers: [server],
    convertSchemasToStrict: true,
    runContext: new RunContext({}),
  })) as Tool[];
  return { server, tools };
}

frameworkSuite(
  'OpenAI Agents SDK (@openai/agents, strict schemas)',
  async (base) => {
    const host = await strictTools(`${base}/mcp/host`, 'conclave-host');
    const participant = await strictTools(`${base}/mcp`, 'conclave');
    return {
      names: { host: host.tools.map((tool) => tool.name), participant: participant.tools.map((tool) => tool.name) },
      tools: { host: caller(host.tools), participant: caller(participant.tools) },
      all: [...host.tools, ...participant.tools],
      close: async () => {
        await host.server.close();
        await participant.server.close();
      },
    };
  },
  // Every tool converted to a strict schema rather than falling back to a non-strict one.
  ({ all }) => {
    for (const tool of all) {
      expect(tool.strict, tool.name).toBe(true);
      const parameters = tool.parameters as Json;
      expect(parameters.additionalProperties, tool.name).toBe(false);
      expect(parameters.required, tool.name).toEqual(Object.keys(parameters.properties as Json));
    }
  },
);
