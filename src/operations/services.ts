/** What operations may use: the runtime, the store, keys, clock and settings. Built once in app.ts. */
import type { Observer } from '../observability/metrics.js';
import type { AuthSettings } from '../auth/caller.js';
import type { GuessThrottle } from '../auth/guess-throttle.js';
import type { KnownCredentials } from '../auth/known-credentials.js';
import type { MandateDeps } from '../auth/mandates.js';
import type { RateLimitSettings, RequestRateCounter } from '../auth/rate-limit.js';
import type { Engagement } from '../engagement/engagement.js';
import type { Keyring } from '../receipts/index.js';
import type { Clock } from '../runtime/clock.js';
import type { Presence } from '../runtime/presence.js';
import type { RoomRegistry } from '../runtime/registry.js';
import type { RoomStore } from '../store/port.js';
import type { TransparencyLog } from '../tlog/log.js';
import type { PositionLabels } from '../tlog/position-labels.js';

export interface ServiceInfo {
  name: string;
  version: string;
  operatorName: string;
  operatorContact: string;
}

export interface Services {
  /**
   * True while the start-up warm-up runs (src/warm-up.ts): the process listens and answers
   * liveness, and /readyz says not_ready, warming, until it ends.
   */
  warming?: boolean;
  registry: RoomRegistry;
  store: RoomStore;
  keyring: Keyring;
  clock: Clock;
  baseUrl: string;
  auth: AuthSettings;
  info: ServiceInfo;
  /** Mandate verification (issuer trust, rate caps); null until identity is wired. */
  mandates: MandateDeps | null;
  /**
   * The hosted account (`public_id`) of an `rk_…` key presented beside the mandate it was issued
   * with (docs/concepts.md, Mandates), or null; used for account-bound invites.
   */
  hostedAccount: ((hostedKey: string, mandateJti: string) => Promise<string | null>) | null;
  /** Wrong passwords, invites and tokens per room and client address (auth/guess-throttle.ts). */
  guesses?: GuessThrottle | null;
  /** The per-credential limiter, for transports whose credentials travel inside the body (MCP). */
  requestRates: { counter: RequestRateCounter; settings: RateLimitSettings; known?: KnownCredentials } | null;
  /** Members' last reads, for read_receipts. */
  presence: Presence;
  /** Long-polls, streams, webhooks and opener-seal wake bookkeeping. */
  engagement: Engagement;
  /** Tool calls and mandate verifications, for the metrics (src/observability/metrics.ts). */
  observer?: Observer;
  /** The transparency log of every receipt (docs/transparency-log.md); absent where a test builds services by hand. */
  tlog?: TransparencyLog;
  /** The frozen v1 log (read only, served under /log/v1/ once it has leaves). */
  frozenTlog?: TransparencyLog;
  /** The VRF position keys and labels of the log's leaves (the member endpoint, /outcome, discovery). */
  positions?: PositionLabels;
}
