/**
 * Mounts both catalogs on the fastify app: `POST /mcp` and `POST /mcp/host`, each served in both MCP
 * eras by the SDK's web-standard handler. The routes live in their own encapsulated context whose
 * only body parser keeps the raw bytes, so the SDK sees exactly what the client sent (and answers
 * empty or malformed JSON itself). The one exception is a JSON-RPC batch, refused before the SDK sees
 * it (batch.ts). GET and DELETE have no route: the app's not-found handler answers them with the REST
 * 405 envelope.
 */
import { noteErrorCode } from '../observability/error-codes.js';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BODY_LIMIT } from '../http/body.js';
import { sendError } from '../http/errors.js';
import { type CallerRateLimits, limitMcpMessage } from '../http/rate-limit-hook.js';
import type { Services } from '../operations/services.js';
import type { AnyOperation, Catalog } from '../operations/types.js';
import { BATCH_REFUSAL, isBatch } from './batch.js';
import type { CallOrigin } from './call-tool.js';
import { buildCatalog, CATALOG_PATHS } from './catalog.js';
import { catalogServerFactory, type McpExchange } from './server.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade']);
const CATALOGS: readonly Catalog[] = ['participant', 'host'];
/** The access-log code of an MCP exchange refused at the JSON-RPC level (no tool ran). */
const JSONRPC_REFUSAL = 'mcp.request_refused';

export interface McpOptions {
  services: Services;
  operations: readonly AnyOperation[];
  /** The request limits; each message is counted once its body is read (http/rate-limit-hook.ts). */
  limits?: CallerRateLimits;
}

function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The tool a `tools/call` message names. */
function calledTool(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || (message as { method?: unknown }).method !== 'tools/call')
    return undefined;
  const name = (message as { params?: { name?: unknown } }).params?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The body parsed once, for the limiter, the batch check and the SDK; undefined when it is not JSON. */
function parseMessage(body: Buffer | undefined): { message: unknown } | undefined {
  if (body === undefined || body.length === 0) return undefined;
  try {
    return { message: JSON.parse(body.toString('utf8')) };
  } catch {
    return undefined;
  }
}

/** The request limits and the tools that also count on the per-credential limit (the mutating ones). */
interface McpLimits {
  limits: CallerRateLimits;
  mutatingTools: ReadonlySet<string>;
}

async function serve(
  handler: McpHttpHandler,
  limiting: McpLimits | undefined,
  exchanges: WeakMap<Request, McpExchange>,
  origin: CallOrigin,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const abort = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const body = request.body as Buffer | undefined;
  const parsed = parseMessage(body);
  let called = origin;
  if (limiting) {
    const at = origin.services.clock.now();
    const refusal = await limitMcpMessage(
      limiting.limits,
      parsed?.message,
      origin.mandateHeader,
      request.ip,
      at,
      request.log,
      limiting.mutatingTools,
    );
    if (refusal?.inTool) called = { ...origin, refused: refusal.error };
    else if (refusal) return sendError(reply, request, refusal.error.toSpec(), refusal.error.status);
  }
  if (isBatch(header(request, 'content-type'), parsed?.message)) {
    noteErrorCode(reply, JSONRPC_REFUSAL);
    return reply.code(400).send(BATCH_REFUSAL);
  }
  // A body that parsed goes to the SDK as `parsedBody` and the Request carries none: no clone, no stream
  // read and no second parse inside the SDK. A body that did not parse is handed over as bytes, so the
  // SDK gives its own answer to it.
  const webRequest = new Request(`${request.protocol}://${request.host}${request.url}`, {
    method: request.method,
    headers: webHeaders(request),
    ...(parsed === undefined && body !== undefined && body.length > 0 ? { body } : {}),
    signal: abort.signal,
  });
  // The SDK builds the per-request server inside fetch and hands its factory this Request, under which the
  // exchange is found (a WeakMap rather than an AsyncLocalStorage: on Node 20 the latter turns on promise
  // hooks for every promise of the process; docs/performance.md, MCP close to REST).
  exchanges.set(webRequest, { origin: called, toolName: calledTool(parsed?.message) });
  const response = await handler.fetch(webRequest, parsed === undefined ? undefined : { parsedBody: parsed.message });
  // The SDK's own refusals (a JSON-RPC error, a wrong protocol version or Accept header) carry no
  // protocol code: the access line names them as JSON-RPC refusals.
  if (response.status >= 400) noteErrorCode(reply, JSONRPC_REFUSAL);
  return sendResponse(reply, response);
}

/**
 * A JSON answer is read whole and sent as one buffer (fastify's web-stream path costs a reader and a
 * write per chunk); an event stream (the 2025-11-25 era, a long `wait` with its keep-alives) streams.
 */
async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  const type = response.headers.get('content-type');
  if (response.body === null || type === null || !type.startsWith('application/json')) return reply.send(response);
  const bytes = Buffer.from(await response.arrayBuffer());
  reply.code(response.status);
  for (const [name, value] of response.headers) if (name !== 'content-length') reply.header(name, value);
  return reply.send(bytes);
}

async function mcpRoutes(app: FastifyInstance, options: McpOptions): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    done(null, body);
  });
  const exchanges = new WeakMap<Request, McpExchange>();
  const limiting = options.limits && {
    limits: options.limits,
    mutatingTools: new Set(options.operations.flatMap((op) => (op.mutating && op.mcp ? [op.mcp.tool] : []))),
  };
  for (const catalog of CATALOGS) {
    const path = CATALOG_PATHS[catalog];
    const serverFor = catalogServerFactory({
      catalog,
      version: options.services.info.version,
      tools: buildCatalog(catalog, options.operations),
    });
    const handler = createMcpHandler(
      // The SDK passes a copy of the Request, not ours, only for a body it reads itself (one that did not
      // parse as JSON): it refuses that body and no tool runs.
      ({ requestInfo }) => serverFor(requestInfo && exchanges.get(requestInfo)),
      {
        maxRequestBodySize: BODY_LIMIT,
        // A malformed JSON-RPC request is the client's mistake: one line, no stack and no message (a parse
        // error's message quotes the body, which may hold a token); see docs/architecture.md, Errors.
        onerror: (error) => app.log.debug({ catalog, error: error.name }, 'MCP request rejected'),
      },
    );
    app.addHook('onClose', () => handler.close());
    app.post(path, (request, reply) =>
      serve(
        handler,
        limiting,
        exchanges,
        {
          services: options.services,
          catalogPath: path,
          requestId: request.id,
          clientIp: request.ip,
          mandateHeader: header(request, 'x-mandate'),
          log: request.log,
        },
        request,
        reply,
      ),
    );
  }
}

/** The MCP transport as an HttpOptions extension. */
export function mcpExtension(options: McpOptions): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    await app.register(mcpRoutes, options);
  };
}
