/**
 * The MCP protocol versions the service negotiates (docs/architecture.md, Robustness at the edges:
 * MCP framing): the current revision, served through `server/discover`, and the stateless 2025-11-25
 * lifecycle, served through `initialize`.
 */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25'] as const;
