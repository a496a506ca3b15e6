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
  type Budget,
  credentialRateKey,
  type RateBucket,
  type RateLimitSettings,
  type Refusal,
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

/**
 * Counts one call on all of its budgets or on none (RequestRateCounter.takeAll; the hook bounds how
 * long it may take): null when counted, else which budget refused.
 */
export type Take = (budgets: readonly Budget[]) => Promise<Refusal | null>;

/** A budget a call is counted on, with what its refusal says. */
export interface CountedOn extends Budget {
  scope: 'ip' | 'credential';
  /** Which of the scope's limits it is; absent for the two original limits. */
  described?: RateBucket;
}

/** A call refused: the error to answer, and the budget that refused it. */
export interface CallRefusal {
  error: ProtocolError;
  budget: CountedOn;
}

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
  also: readonly CountedOn[] = [],
): Promise<CallRefusal | null> {
  const key = mints ? null : credentialRateKey(presented);
  const proven = key === null ? null : await known.lookup(key).catch(() => null);
  const budgets: CountedOn[] =
    proven === null
      ? [{ key: `ip:${address}`, limit: settings.ipPerMinute, scope: 'ip' }]
      : [
          {
            key: proven.bucket,
            limit: settings.credentialCallsPerMinute,
            scope: 'credential',
            described: BUCKETS.credentialCalls,
          },
          ...(proven.issuer === null
            ? []
            : [
                {
                  key: proven.issuer,
                  limit: settings.issuerPerMinute,
                  scope: 'credential',
                  described: BUCKETS.issuer,
                } satisfies CountedOn,
              ]),
          {
            key: `ip-auth:${address}`,
            limit: settings.authenticatedIpPerMinute,
            scope: 'ip',
            described: BUCKETS.authenticatedIp,
          },
        ];
  return countOn(take, [...budgets, ...also]);
}

/** Counts the call on every budget whose limit is on, all together (one round trip on Redis); the refusal, or null. */
async function countOn(take: Take, budgets: readonly CountedOn[]): Promise<CallRefusal | null> {
  const active = budgets.filter(({ limit }) => limit > 0);
  if (active.length === 0) return null;
  const refused = await take(active);
  if (refused === null) return null;
  const budget = active[refused.index]!;
  const error = rateLimitError(budget.scope, budget.limit, refused.decision.retryAfterSeconds, budget.described);
  return { error, budget };
}

/** Counts an MCP message that is not a tool call: it carries no credential and touches no room. */
export async function limitMcpSetup(settings: LimitSettings, take: Take, address: string): Promise<CallRefusal | null> {
  return countOn(take, [
    { key: `mcp-setup:${address}`, limit: settings.mcpSetupPerMinute, scope: 'ip', described: BUCKETS.mcpSetup },
  ]);
}
