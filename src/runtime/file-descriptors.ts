/**
 * The process's file-descriptor limit, and the connection budget derived from it. Node itself
 * raises the soft limit to the hard limit at start-up, so the soft limit read here is already as
 * high as the OS allows this process; raising the hard limit is the start command's job (compose
 * `ulimits`, `docker run --ulimit`, systemd `LimitNOFILE`; docs/architecture.md, Robustness at the
 * edges). Node has no getrlimit, so the limit is read from /proc on Linux; elsewhere it is unknown.
 */
import { readFileSync } from 'node:fs';

/** The soft RLIMIT_NOFILE, or null when unknown (not Linux) or unlimited. */
export function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const value = Number(soft);
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

export interface ConnectionBudget {
  /** Client sockets held at once; past it the longest-idle one makes room. Infinity when unknown. */
  maxOpen: number;
  /** Client sockets one address may hold, unless configured (MAX_CONNECTIONS_PER_ADDRESS). */
  defaultPerAddress: number;
}

/** Below this limit, start-up warns: a few hundred clients would exhaust it. */
export const LOW_FILE_LIMIT = 4096;

/**
 * An eighth of the descriptors (at least 64) stays free of client sockets: the store's files, Redis,
 * webhook and issuer-key connections, logs. An address gets a tenth of the rest, between 16 (a
 * handful of agents behind one NAT) and 512.
 */
export function connectionBudget(limit: number | null): ConnectionBudget {
  if (limit === null) return { maxOpen: Number.POSITIVE_INFINITY, defaultPerAddress: 512 };
  const maxOpen = Math.max(64, limit - Math.max(64, Math.floor(limit / 8)));
  return { maxOpen, defaultPerAddress: Math.min(512, Math.max(16, Math.floor(maxOpen / 10))) };
}
