/**
 * Request limits by who is calling (docs/architecture.md, Rate limits by caller). The limiter runs
 * before authentication, so it cannot trust what a request claims: a presented credential earns its
 * own budget only when it is known (known-credentials.ts: it matched a seat, was just minted, or is
 * a verified mandate whose subject holds a seat). Everything else — no credential, garbage, a forged
 * or freshly self-issued mandate — counts against the client address, as before.
 *
 * A known credential is counted three times: on its own budget (a token, or the mandate's (issuer,
 * subject) — every mandate one subject holds shares it), on its issuer's budget (so one issuer
 * cannot spread an unlimited load over subjects it mints), and on a loose ceiling per client address
 * for authenticated calls (every new credential costs the address a join, so this only bounds how
 * far one address can multiply its budget by collecting seats).
 */
import type { ProtocolError } from '../errors.js';
import type { KnownCredentials } from './known-credentials.js';
import {
  credentialRateKey,
  type RateBucket,
  type RateDecision,
  type RateLimitSettings,
  rateLimitError,
} from './rate-limit.js';

/** The limits by caller; 0 disables each. */
export interface CallerLimitSettings {
  /** Calls of every kind (reads and waits included) per known credential. */
  credentialCallsPerMinute: number;
  /** Calls per external mandate issuer, all of its subjects together. */
  issuerPerMinute: number;
  /** Calls with a known credential per client address. */
  authenticatedIpPerMinute: number;
  /** MCP messages that are not tool calls (initialize, notifications, tools/list, ping) per client address. */
  mcpSetupPerMinute: number;
}

export type LimitSettings = RateLimitSettings & CallerLimitSettings;

/**
 * Whether any limit the request hook enforces is on (ip, per-credential mutations, calls by known
 * credential, issuer, authenticated address). When none is, the hook has nothing to count and is
 * not installed, and on the embedded store no one reads the table of known credentials.
 */
export function limitsCallsByCaller(settings: LimitSettings): boolean {
  return (
    settings.ipPerMinute > 0 ||
    settings.credentialPerMinute > 0 ||
    settings.credentialCallsPerMinute > 0 ||
    settings.issuerPerMinute > 0 ||
    settings.authenticatedIpPerMinute > 0
  );
}

/** Counts one call on a bucket (the hook bounds how long it may take). */
export type Take = (key: string, limit: number) => Promise<RateDecision>;

const BUCKETS = {
  credentialCalls: { bucket: 'credential_calls', who: 'this credential', what: 'requests' },
  issuer: { bucket: 'issuer', who: "this mandate's issuer (all its subjects together)", what: 'requests' },
  authenticatedIp: { bucket: 'authenticated_ip', who: 'this client address', what: 'authenticated requests' },
  mcpSetup: {
    bucket: 'mcp_setup',
    who: 'this client address',
    what: 'MCP messages other than tool calls',
  },
} satisfies Record<string, RateBucket>;

/**
 * Counts one call by its caller; the refusal to answer with, or null. `lookup` failing (the shared
 * table is away) counts the call against the address: the failure never opens a wider budget.
 * A call that mints credentials (`mints`: create, join) always counts against the address, whatever
 * it presents: otherwise each known credential could pay for new ones, and one seat would grow into
 * any number of budgets without the address ever paying.
 */
export async function limitCall(
  settings: LimitSettings,
  known: KnownCredentials,
  take: Take,
  presented: { bearer?: string | undefined; mandate?: string | undefined },
  address: string,
  mints: boolean,
): Promise<ProtocolError | null> {
  const key = mints ? null : credentialRateKey(presented);
  const proven = key === null ? null : await known.lookup(key).catch(() => null);
  if (proven === null) {
    if (settings.ipPerMinute <= 0) return null;
    const decision = await take(`ip:${address}`, settings.ipPerMinute);
    return decision.allowed ? null : rateLimitError('ip', settings.ipPerMinute, decision.retryAfterSeconds);
  }
  const checks: [string, number, 'ip' | 'credential', RateBucket][] = [
    [proven.bucket, settings.credentialCallsPerMinute, 'credential', BUCKETS.credentialCalls],
    ...(proven.issuer === null
      ? []
      : [
          [proven.issuer, settings.issuerPerMinute, 'credential', BUCKETS.issuer] as [
            string,
            number,
            'credential',
            RateBucket,
          ],
        ]),
    [`ip-auth:${address}`, settings.authenticatedIpPerMinute, 'ip', BUCKETS.authenticatedIp],
  ];
  for (const [bucket, limit, scope, described] of checks) {
    if (limit <= 0) continue;
    const decision = await take(bucket, limit);
    if (!decision.allowed) return rateLimitError(scope, limit, decision.retryAfterSeconds, described);
  }
  return null;
}

/** Counts an MCP message that is not a tool call: it carries no credential and touches no room. */
export async function limitMcpSetup(
  settings: LimitSettings,
  take: Take,
  address: string,
): Promise<ProtocolError | null> {
  if (settings.mcpSetupPerMinute <= 0) return null;
  const decision = await take(`mcp-setup:${address}`, settings.mcpSetupPerMinute);
  return decision.allowed
    ? null
    : rateLimitError('ip', settings.mcpSetupPerMinute, decision.retryAfterSeconds, BUCKETS.mcpSetup);
}
