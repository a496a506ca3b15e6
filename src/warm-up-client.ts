/**
 * How the start-up warm-up talks to its throwaway service (src/warm-up.ts): fastify's in-process
 * injection, no socket, and every answer that is not what a working service gives counted as a
 * failure (the warm-up then did not walk the path it meant to; the `warmed up` log line says so).
 */
import type { FastifyInstance } from 'fastify';
import type { MCP_PROTOCOL_VERSIONS } from './mcp/versions.js';

/** One of the MCP protocol versions the service negotiates: each opens its session differently. */
export type Era = (typeof MCP_PROTOCOL_VERSIONS)[number];

export interface Answer {
  status: number;
  body: string;
}

const ACCEPT = 'application/json, text/event-stream';
const CLIENT_INFO = { name: 'conclave-warm-up', version: '0' };

/** What a call answers once the warm-up's time is up: not sent, and not a failure. */
const NOT_SENT: Answer = { status: 0, body: '' };

export class WarmUpClient {
  failures = 0;
  /** Calls not sent because the warm-up's time was up (WARMUP_MAX_MS). */
  skipped = 0;

  /** `deadline`: the performance.now() past which calls are no longer sent. */
  constructor(
    private readonly app: FastifyInstance,
    private readonly deadline = Number.POSITIVE_INFINITY,
  ) {}

  async exchange(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> {
    if (performance.now() > this.deadline) {
      this.skipped++;
      return NOT_SENT;
    }
    const response = await this.app.inject({
      method,
      url,
      headers,
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: response.statusCode, body: response.body };
  }

  /** A REST call; anything but a 2xx is a failure. */
  async rest(method: 'GET' | 'POST', url: string, token?: string, body?: unknown): Promise<Record<string, unknown>> {
    const answer = await this.exchange(
      method,
      url,
      {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body,
    );
    if (answer === NOT_SENT) return {};
    if (answer.status >= 300) this.failures++;
    return answer.status < 300 ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
  }

  /** A JSON-RPC message in one era, with the headers and `_meta` that era's SDK client sends. */
  rpc(era: Era, id: number | null, method: string, params?: Record<string, unknown>): Promise<Answer> {
    const modern = era === '2026-07-28';
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT };
    if (modern || method !== 'initialize') headers['mcp-protocol-version'] = era;
    if (modern) {
      headers['mcp-method'] = method;
      if (method === 'tools/call') headers['mcp-name'] = String(params?.name);
    }
    const meta = modern
      ? {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': era,
            'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        }
      : {};
    return this.exchange('POST', '/mcp', headers, {
      jsonrpc: '2.0',
      method,
      ...(id === null ? {} : { id }),
      ...(params || modern ? { params: { ...params, ...meta } } : {}),
    });
  }

  /** A tool call; its structured answer, or null (and a failure) when it errs. */
  async tool(
    era: Era,
    id: number,
    name: string,
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown> | null> {
    const answer = await this.rpc(era, id, 'tools/call', { name, arguments: args });
    if (answer === NOT_SENT) return null;
    // The 2025 era may frame its answer as one server-sent event.
    const json = answer.body.startsWith('event:') ? answer.body.slice(answer.body.indexOf('{')) : answer.body;
    try {
      const parsed = JSON.parse(json) as {
        result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
      };
      if (answer.status < 300 && parsed.result && parsed.result.isError !== true)
        return parsed.result.structuredContent ?? {};
    } catch {
      // Not JSON: a failure, counted below.
    }
    this.failures++;
    return null;
  }

  /** Counts a failure unless the answer's status is the expected one. */
  expect(answer: Answer, status: number): void {
    if (answer !== NOT_SENT && answer.status !== status) this.failures++;
  }

  static readonly clientInfo = CLIENT_INFO;
}
