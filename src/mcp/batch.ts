/**
 * JSON-RPC batches are refused on both MCP endpoints, whatever version the client claims
 * (docs/architecture.md, Robustness at the edges: MCP framing). Batching existed only in MCP
 * 2025-03-26; 2025-06-18 removed it, and the two versions the service negotiates (2026-07-28 and the
 * stateless 2025-11-25) take one JSON-RPC message per POST. Serving batches would let one HTTP
 * request, counted once by the rate limits (http/rate-limit-hook.ts), carry a hundred creates, joins
 * or parked waits. The answer is the one the SDK itself gives a batch on the 2026-07-28 era: HTTP 400
 * with JSON-RPC `-32600` (Invalid Request).
 */
import { isJsonContentType, ProtocolErrorCode } from '@modelcontextprotocol/server';

export const BATCH_REFUSAL = {
  jsonrpc: '2.0',
  id: null,
  error: {
    code: ProtocolErrorCode.InvalidRequest,
    message:
      'Invalid Request: JSON-RPC batches are not accepted (MCP 2025-06-18 and later have no batching). ' +
      'Send one JSON-RPC message per request; each request counts against the rate limits on its own.',
  },
} as const;

/** Whether a POST body (parsed once by the MCP route; undefined when it is not JSON) is a JSON-RPC batch. */
export function isBatch(contentType: string | undefined, message: unknown): boolean {
  return Array.isArray(message) && isJsonContentType(contentType);
}
