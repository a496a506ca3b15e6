/**
 * Which Redis errors mean "the store cannot serve right now" (docs/architecture.md, Errors): the
 * request is then answered 503 with Retry-After, and a retry with the same Idempotency-Key is safe,
 * never 500. A Cluster failover brings all of them within seconds: MOVED/ASK storms while the slots
 * move, CLUSTERDOWN, READONLY from a demoted master, TRYAGAIN, connections reset under a script
 * (ioredis: "Connection is closed.", AbortError), "Too many Cluster redirections", a slots refresh
 * that failed everywhere (ClusterAllFailedError), retries spent (MaxRetriesPerRequestError).
 * Recognised by name and message, so this module needs no ioredis import.
 */

/** Reply error codes that say Redis (or its cluster) cannot serve now, as opposed to a bad request. */
const TRANSIENT_CODES =
  'MOVED|ASK|TRYAGAIN|CLUSTERDOWN|LOADING|BUSY|READONLY|MASTERDOWN|NOREPLICAS|OOM|MISCONF|UNBLOCKED|EXECABORT';
const TRANSIENT_REPLY = new RegExp(`^(?:${TRANSIENT_CODES})\\b`);
/** Before Redis 7 a failed redis.call inside a script came back as "ERR Error running script …: -CODE …". */
const TRANSIENT_IN_SCRIPT = new RegExp(`^ERR Error running script\\b.*-(?:${TRANSIENT_CODES})\\b`, 's');

/** Errors ioredis raises about a connection or the cluster's topology, by class name. */
const CONNECTION_ERROR_NAMES = new Set([
  'AbortError',
  'InterruptError',
  'ParserError',
  'MaxRetriesPerRequestError',
  'ClusterAllFailedError',
]);

/** The plain `Error`s ioredis raises about connections and the cluster. */
const CONNECTION_MESSAGE =
  /^(?:Connection is closed|Cluster isn't ready|Too many Cluster redirections|Stream isn't writeable|Failed to refresh slots cache|Command timed out|Connection in subscriber mode)/;

/** Whether a Redis reply error says "not now" (see TRANSIENT_CODES), not "wrong". */
export function isTransientReply(message: string): boolean {
  return TRANSIENT_REPLY.test(message) || TRANSIENT_IN_SCRIPT.test(message);
}

/**
 * Whether `error` (or an error it wraps, as `cause`) is Redis being unavailable rather than a bug:
 * the last line of defence for a Redis call that reached the HTTP layer without going through the
 * store's own mapping (redis-calls.ts, toStoreError).
 */
export function isRedisUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current.name === 'ReplyError' && isTransientReply(current.message)) return true;
    if (CONNECTION_ERROR_NAMES.has(current.name) || CONNECTION_MESSAGE.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}
