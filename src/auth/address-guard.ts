/**
 * The outbound address guard (docs/agents.md, The REST loop): the service never lets a caller-supplied URL (a mandate
 * issuer, a webhook) reach loopback, private, link-local, unique-local, carrier-grade NAT, multicast
 * or unspecified addresses, in IPv4, IPv6 or IPv4-mapped IPv6 form.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['64:ff9b::', 96], // NAT64 reaches IPv4 space through a translator
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** True when `address` (an IP literal) must not be contacted. Non-IP input counts as forbidden. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return FORBIDDEN.check(bare, 'ipv4');
  if (family !== 6) return true;
  const mapped = ipv4FromMapped(bare);
  if (mapped !== null) return FORBIDDEN.check(mapped, 'ipv4');
  return FORBIDDEN.check(bare, 'ipv6');
}

/** `::ffff:a.b.c.d` or `::ffff:xxxx:yyyy` → `a.b.c.d`; anything else → null. */
function ipv4FromMapped(address: string): string | null {
  const match = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(.+)$/i.exec(address);
  if (!match) return null;
  const tail = match[1]!;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
  if (!hex) return null;
  const high = Number.parseInt(hex[1]!, 16);
  const low = Number.parseInt(hex[2]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

export class ForbiddenAddressError extends Error {
  constructor(readonly host: string) {
    super(`${host} resolves to an address the service does not contact (loopback, private or reserved)`);
    this.name = 'ForbiddenAddressError';
  }
}

/**
 * A `lookup` for net/tls connections that refuses forbidden addresses. Checking the addresses the
 * socket actually connects to (not a separate resolution beforehand) closes the DNS-rebinding gap.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const allowed = addresses.filter((entry) => !isForbiddenAddress(entry.address));
    if (allowed.length === 0 || allowed.length !== addresses.length) {
      return callback(Object.assign(new ForbiddenAddressError(hostname), { code: 'EACCES' }), '', 0);
    }
    if (options.all) return callback(null, allowed);
    const first = allowed[0]!;
    callback(null, first.address, first.family);
  });
};

/** IP-literal hosts never reach `lookup`, so they are checked up front. */
export function assertHostAllowed(hostname: string): void {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0 && isForbiddenAddress(bare)) throw new ForbiddenAddressError(hostname);
  if (bare === 'localhost' || bare.endsWith('.localhost')) throw new ForbiddenAddressError(hostname);
}
