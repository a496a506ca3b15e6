/**
 * The floor under the MCP rows (docs/performance.md, MCP close to REST): a bare server of the same
 * MCP SDK (`@modelcontextprotocol/server`'s `createMcpHandler`, both eras, no sessions) with one
 * no-op `choose` tool, served by fastify the way the service serves it (the parsed body handed over
 * as `parsedBody`, the JSON answer read whole), the same protocol versions and the same pass-through
 * argument schema. No room, no credential, no operation: what any MCP tool call costs with this SDK
 * on this stack, so that MCP `choose` reads as REST's cost plus the SDK's plus ours. `POST /choose`
 * on the same server is plain fastify answering the same body: the floor of the floor.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import Fastify from 'fastify';
import { passThroughSchema } from '../src/mcp/server.js';
import { MCP_PROTOCOL_VERSIONS } from '../src/mcp/versions.js';

const NO_OP_RESULT = { ok: true };

export async function startMcpFloor(): Promise<{ base: string; close: () => Promise<void> }> {
  const options = {
    capabilities: { tools: { listChanged: false } },
    supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
  };
  const schema = passThroughSchema({ type: 'object' });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'floor', version: '0.0.0' }, options);
    server.registerTool('choose', { description: 'Does nothing.', inputSchema: schema }, () => ({
      content: [{ type: 'text', text: JSON.stringify(NO_OP_RESULT) }],
      structuredContent: NO_OP_RESULT,
    }));
    return server;
  });
  const app = Fastify({ logger: false });
  // The same fastify without MCP, interleaved with the floor rows: what the SDK adds is their difference.
  app.post('/choose', async () => NO_OP_RESULT);
  app.post('/mcp', async (request, reply) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && name !== 'content-length' && name !== 'host') headers.set(name, value);
    }
    const response = await handler.fetch(
      new Request(`http://${request.host}${request.url}`, { method: 'POST', headers }),
      {
        parsedBody: request.body,
      },
    );
    reply.code(response.status);
    for (const [name, value] of response.headers) if (name !== 'content-length') reply.header(name, value);
    return reply.send(Buffer.from(await response.arrayBuffer()));
  });
  const base = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  return {
    base,
    close: async () => {
      await app.close();
      await handler.close();
    },
  };
}
