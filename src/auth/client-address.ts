/**
 * The unit a per-address limit counts: an IPv4 address, or an IPv6 /64. One IPv6 client is handed
 * a whole /64 (2^64 addresses), so counting single IPv6 addresses would let it write a fresh one into
 * every request; a /64 is the smallest block one client is usually given (docs/architecture.md,
 * Robustness at the edges). IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
 *
 * Every per-address key goes through this one function: sockets, parked shares, the request limits
 * (anonymous, authenticated ceiling, MCP setup), room creation, every guess tier and the address an
 * idempotent credential is bound to. Logs keep the exact address. It is idempotent: a group maps to
 * itself.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function addressGroup(ip: string): string {
  const bare = ip.split('%')[0]!;
  const lower = bare.toLowerCase();
  if (lower.startsWith('::ffff:') && isIPv4(lower.slice(7))) return lower.slice(7);
  if (!isIPv6(lower)) return lower;
  const halves = lower.split('::');
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  // A trailing dotted IPv4 part fills two 16-bit groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = halves.length > 1 ? [...left, ...Array(8 - width(left) - width(right)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
