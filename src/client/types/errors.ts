/**
 * The error codes a call can fail with (docs/agents.md, The REST loop), as a closed union: the
 * protocol's and OAuth's come from the schemas of their envelopes (generated.ts).
 */
import type { ErrorEnvelope, OAuthErrorCode } from './generated.js';

/**
 * Every `ConclaveError.code`: the protocol's codes and the service's vendor codes (the envelope's
 * schema), any vendor's own (`vendor:<vendor>:<code>`), OAuth's, and two the client itself produces:
 * `mcp.error` (an MCP answer without a result) and `http_<status>` (an answer without an envelope,
 * e.g. from a proxy).
 */
export type ErrorCode =
  | ErrorEnvelope['error']['code']
  | `vendor:${string}`
  | OAuthErrorCode
  | 'mcp.error'
  | `http_${number}`;
