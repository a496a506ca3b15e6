/** The MCP transport: both tool catalogs, generated from the operation table, served in both MCP eras. */
export { buildCatalog, CATALOG_PATHS, type ToolSpec } from './catalog.js';
export { type McpOptions, mcpExtension } from './plugin.js';
export { MCP_PROTOCOL_VERSIONS } from './versions.js';
