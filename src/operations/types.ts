/**
 * The operation table's types. Each protocol operation is written once as an OperationDef: its zod
 * input and output schemas, REST binding and MCP tool name. REST routes, MCP tools and the OpenAPI
 * document are generated from these definitions.
 */
import type { z } from 'zod';
import type { PresentedCredentials } from '../auth/caller.js';
import type { MandateAction } from '../auth/mandates.js';
import type { ShownTextKind } from '../domain/shown-text.js';
import type { ProtocolError } from '../errors.js';
import type { Services } from './services.js';

export type Catalog = 'participant' | 'host';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type Tag = 'meta' | 'discovery' | 'rooms' | 'decisions' | 'actions' | 'events' | 'outcomes' | 'oauth';

export interface RequestContext {
  services: Services;
  credentials: PresentedCredentials;
  idempotencyKey: string | undefined;
  requestId: string;
  /** The client's exact address (after TRUST_PROXY); every per-address key counts its group (auth/client-address.ts). */
  clientIp: string;
  transport: 'rest' | 'mcp';
  /** Idempotency operation scope: HTTP method + concrete path, or MCP catalog + tool + slug. */
  operationScope: string;
  /** What the idempotency fingerprint is computed over (the parsed body, query or tool arguments). */
  fingerprintSource: unknown;
  /** Extra request headers an operation needs (X-Confirm-Delete). */
  headers: Record<string, string | undefined>;
  /** Set by the runtime when the response is a stored idempotent result. */
  replayed: boolean;
  /** Response headers an operation wants to add. */
  responseHeaders: Record<string, string>;
  /** Aborted when the client goes away (a parked long-poll is released at once). */
  signal?: AbortSignal;
  /**
   * Writes a shared answer (engagement/long-poll.ts) as the response at once, from inside the wake that
   * made it (REST GET only; http/routes.ts). The operation's result is then not sent again.
   */
  answerWoken?: (answer: Record<string, unknown>) => void;
}

export interface OperationDef<I = unknown> {
  /** operationId in OpenAPI (camelCase). */
  name: string;
  summary: string;
  description: string;
  tag: Tag;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/rooms/{slug}/choose`. */
  path: string;
  /** Where the non-path fields come from on REST. */
  inputSource: 'body' | 'query' | 'none';
  input: z.ZodType<I>;
  output: z.ZodType;
  requestSchemaName?: string;
  responseSchemaName?: string;
  /** Mutations accept Idempotency-Key. */
  mutating: boolean;
  /** Responses carry Cache-Control: no-store. */
  noStore?: boolean;
  /**
   * Room acts validate their fields at step 9 of the check order (after terminal state and authority):
   * a validation failure is handed to the handler instead of being thrown at once.
   */
  deferValidation?: boolean;
  /**
   * The input fields other agents are shown, and how each is checked (domain/shown-text.ts): a
   * string, or an array of strings checked one by one.
   */
  shownText?: Readonly<Record<string, ShownTextKind>>;
  /**
   * A worked example, shown in the OpenAPI document: the input fields (path parameters included,
   * as on the MCP tool) and, where it helps, the response.
   */
  example: { input: Record<string, unknown>; output?: Record<string, unknown> };
  mcp?: {
    tool: string;
    catalogs: Catalog[];
    readOnly?: boolean;
    /** The tool can destroy or end something (a room, an invite, a webhook): clients should confirm. */
    destructive?: boolean;
    /** Repeating the call with the same arguments has no further effect. */
    idempotent?: boolean;
  };
  /** Served over MCP only (`list_rooms`): no REST route, not in the OpenAPI document. */
  mcpOnly?: true;
  /** The mandate action this operation needs (docs/concepts.md, Mandates); absent = none (reads, waits, webhooks). */
  mandateAction?: MandateAction;
  /** The weight a mandate's weight_cap is checked against (a quadratic ballot's credits). */
  mandateWeight?: (ctx: RequestContext, input: I) => Promise<number | undefined>;
  handle(ctx: RequestContext, input: I, invalid?: ProtocolError): Promise<Record<string, unknown>>;
}

// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every input type
export type AnyOperation = OperationDef<any>;
