/**
 * Meta routes: discovery (honest: only what is wired), JWKS, health, readiness and the OpenAPI
 * document (docs/agents.md, docs/operators.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Revocation } from '../auth/identity-store.js';
import { MANDATE_ACTIONS } from '../auth/mandate-claims.js';
import { DEFAULT_ROOM_CONFIG } from '../domain/config.js';
import { WIRED_MECHANISMS } from '../mechanisms/index.js';
import type { Services } from '../operations/services.js';
import type { AnyOperation } from '../operations/types.js';
import { within } from '../runtime/within.js';
import { LEAF_DESCRIPTION, PROTOCOL_VERSION } from './meta-openapi.js';
import { buildOpenApi } from './openapi.js';

export interface Capabilities {
  mcp: boolean;
  mandates: boolean;
  longPoll: boolean;
  sse: boolean;
  webhooks: boolean;
}

/** The frozen v1 log as discovery lists it (docs/transparency-log.md, The frozen v1 log). */
export interface FrozenLogSummary {
  origin: string;
  verifier_key: string;
  size: number;
  log_url: string;
}

export function discoveryDocument(
  services: Services,
  capabilities: Capabilities,
  revocations: readonly Revocation[] = [],
  frozen: readonly FrozenLogSummary[] = [],
): Record<string, unknown> {
  const base = services.baseUrl;
  return {
    protocol_version: PROTOCOL_VERSION,
    protocol_label: `svc/${PROTOCOL_VERSION}`,
    issuer_id: base,
    name: services.info.name,
    purpose: 'Room-based group decisions for software agents: discuss, propose, decide, and receive signed receipts.',
    operator: { name: services.info.operatorName, contact: services.info.operatorContact },
    transports: {
      rest: `${base}/api/rooms`,
      ...(capabilities.mcp
        ? { mcp: `${base}/mcp`, mcp_host: `${base}/mcp/host`, mcp_protocol_versions: ['2026-07-28', '2025-11-25'] }
        : {}),
    },
    auth: {
      auth_modes: capabilities.mandates ? ['token', 'mandate'] : ['token'],
      mandate_required: false,
      mandate_alg: ['EdDSA'],
      ...(capabilities.mandates ? { oauth_resource_metadata: `${base}/.well-known/oauth-protected-resource` } : {}),
    },
    mechanisms_supported: [...WIRED_MECHANISMS],
    mandate_actions: capabilities.mandates ? [...MANDATE_ACTIONS] : [],
    room_kind: 'ephemeral',
    visibility: ['public', 'unlisted', 'private'],
    deliberation_modes_supported: ['optional', 'disabled'],
    long_running_pattern: capabilities.webhooks ? 'webhook' : 'poll',
    supports_long_poll: capabilities.longPoll,
    ...(capabilities.longPoll ? { long_poll_max_wait_seconds: 50 } : {}),
    supports_sse_upgrade: capabilities.sse,
    default_voting_window_seconds: DEFAULT_ROOM_CONFIG.voting_window,
    room_config_defaults: DEFAULT_ROOM_CONFIG,
    room_retention: { policy: 'keep_everything' },
    membership_rule: { kind: 'open' },
    keys: services.keyring.jwks().keys,
    jwks_url: `${base}/.well-known/jwks.json`,
    ...(services.tlog ? { audit_log: auditLog(services, base, frozen) } : {}),
    revocations,
    openapi_url: `${base}/v1/openapi.json`,
    conformance: { self_attested: true, validated: false, validated_at: null, validated_against: null },
  };
}

/**
 * Where the transparency log is and how to check it (docs/transparency-log.md): the protocol's
 * `{kind, log_url}` plus the checkpoint origin, the note verifier key, the leaf format, the
 * position keys that label leaves, and the frozen v1 log when there is one.
 */
function auditLog(services: Services, base: string, frozen: readonly FrozenLogSummary[]): Record<string, unknown> {
  const signer = services.tlog?.noteSigner();
  return {
    kind: 'c2sp-tlog-tiles',
    log_url: `${base}/log/`,
    checkpoint_url: `${base}/log/checkpoint`,
    origin: signer?.name,
    verifier_key: signer?.verifierKey,
    leaf: LEAF_DESCRIPTION,
    position_keys: (services.positions?.all() ?? []).map((key) => ({
      key_id: key.keyId,
      public_key: Buffer.from(key.publicKey).toString('base64url'),
    })),
    witnesses: services.tlog?.witnessKeys ?? [],
    ...(frozen.length > 0 ? { frozen } : {}),
  };
}

/** The frozen v1 log, listed only when it has leaves (and a held key signed it). */
async function frozenLogs(services: Services): Promise<FrozenLogSummary[]> {
  const log = services.frozenTlog;
  const latest = await log?.latest();
  if (!log || !latest || latest.size === 0) return [];
  const signer = await log.signedBy();
  if (!signer) return [];
  return [
    {
      origin: signer.origin,
      verifier_key: signer.verifierKey,
      size: latest.size,
      log_url: `${services.baseUrl}/log/v1/`,
    },
  ];
}

export function registerMetaRoutes(
  app: FastifyInstance,
  services: Services,
  operations: readonly AnyOperation[],
  capabilities: Capabilities,
  revocations: () => Promise<Revocation[]> = async () => [],
): void {
  const publicCache = 'public, max-age=300';
  let openapi: string | null = null;

  app.get('/.well-known/svc.json', async (_request, reply) =>
    reply
      .header('cache-control', publicCache)
      .send(discoveryDocument(services, capabilities, await revocations(), await frozenLogs(services))),
  );
  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply.header('cache-control', publicCache).send(services.keyring.jwks()),
  );
  app.get('/v1/openapi.json', async (_request, reply) => {
    // Built on first use so `servers` carries the address the service actually listens on.
    openapi ??= JSON.stringify(buildOpenApi(operations, services.baseUrl, services.info.version));
    return reply
      .header('cache-control', publicCache)
      .header('content-type', 'application/json; charset=utf-8')
      .send(openapi);
  });
  app.get('/healthz', async (_request, reply) => {
    const store = (await storeAnswers(services)) ? ('ok' as const) : ('fail' as const);
    const signingKey = services.keyring.current ? ('ok' as const) : ('fail' as const);
    const status = store === 'ok' && signingKey === 'ok' ? 'ok' : 'degraded';
    return reply
      .header('cache-control', 'no-store')
      .send({ status, version: services.info.version, checks: { store, signing_key: signingKey } });
  });
  app.get('/readyz', async (_request, reply) => {
    // A process still warming up (src/warm-up.ts) answers, but sends its traffic elsewhere for now:
    // ready means warm, and the store answering.
    const ready = services.warming !== true && (await storeAnswers(services));
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not_ready' });
  });
}

/** Probes answer within a second even when the store hangs (a paused Redis waits out its command timeout). */
const PROBE_TIMEOUT_MS = 600;

function storeAnswers(services: Services): Promise<boolean> {
  const pinged = services.store.ping().then(
    () => true,
    () => false,
  );
  return within(pinged, PROBE_TIMEOUT_MS, () => false);
}
