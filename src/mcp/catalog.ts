/**
 * The two tool catalogs, generated from the operation table: every operation with an `mcp` field is a
 * tool on the catalogs it names, plus the derived tools of tool-arguments.ts whose base operation
 * exists. An operation that does not exist yet simply has no tool.
 */
import type { AnyOperation, Catalog } from '../operations/types.js';
import { TOOL_GUIDES } from './descriptions.js';
import { toolInputSchema } from './input-schema.js';
import { toolOutputSchema } from './output-schema.js';
import { DERIVED_TOOLS, TOOL_ARGUMENTS, type ToolArgumentMap } from './tool-arguments.js';

export const CATALOG_PATHS: Readonly<Record<Catalog, string>> = { participant: '/mcp', host: '/mcp/host' };

/** The MCP tool annotations, set from the operation: hints a client may use to ask before acting. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** Every tool acts on this service's rooms only; a webhook reaches out, but to a URL the caller names. */
  openWorldHint: boolean;
}

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  operation: AnyOperation;
  arguments: ToolArgumentMap;
}

function mirroredRoute(operation: AnyOperation, map: ToolArgumentMap): string {
  const fixed = Object.entries(map.fixed ?? {})
    .map(([field, value]) => `${field}=${String(value)}`)
    .join('&');
  return `${operation.method} ${operation.path}${fixed ? `?${fixed}` : ''}`;
}

/** A derived tool fixes some of its operation's options, so the operation's own (general) text is left out. */
function describe(name: string, operation: AnyOperation, map: ToolArgumentMap, derived: boolean): string {
  const guide = TOOL_GUIDES[name];
  const route = operation.mcpOnly
    ? 'MCP only: there is no REST route for this.'
    : `Mirrors ${mirroredRoute(operation, map)} on the REST API.`;
  if (!guide) return `${operation.description} ${route}`;
  const general = derived ? '' : ` ${operation.description}`;
  return `${guide.when}${general} Returns: ${guide.returns} ${route}`;
}

function toolSpec(
  name: string,
  title: string,
  operation: AnyOperation,
  map: ToolArgumentMap,
  derived = false,
): ToolSpec {
  return {
    name,
    title,
    description: describe(name, operation, map, derived),
    inputSchema: toolInputSchema(operation, map),
    outputSchema: toolOutputSchema(operation),
    annotations: annotationsOf(operation),
    operation,
    arguments: map,
  };
}

function annotationsOf(operation: AnyOperation): ToolAnnotations {
  const readOnly = operation.mcp?.readOnly === true;
  return {
    readOnlyHint: readOnly,
    destructiveHint: operation.mcp?.destructive === true,
    // A read changes nothing, so repeating it changes nothing either.
    idempotentHint: readOnly || operation.mcp?.idempotent === true,
    openWorldHint: false,
  };
}

export function buildCatalog(catalog: Catalog, operations: readonly AnyOperation[]): ToolSpec[] {
  const tools: ToolSpec[] = [];
  for (const operation of operations) {
    const mcp = operation.mcp;
    if (!mcp?.catalogs.includes(catalog)) continue;
    tools.push(toolSpec(mcp.tool, operation.summary, operation, TOOL_ARGUMENTS[mcp.tool] ?? {}));
  }
  for (const derived of DERIVED_TOOLS) {
    if (!derived.catalogs.includes(catalog)) continue;
    const base = operations.find((operation) => operation.mcp?.tool === derived.from);
    if (base) tools.push(toolSpec(derived.tool, derived.title, base, derived, true));
  }
  const names = tools.map((tool) => tool.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate) throw new Error(`MCP tool ${duplicate} is defined twice in the ${catalog} catalog`);
  return tools;
}
