/**
 * The shipped template counts a client as the service does (deploy/nginx/nginx.conf.template, map
 * $remote_addr $conclave_client): an IPv4 address, or an IPv6 /64. Only ::1 is reachable on this
 * machine's IPv6 loopback, so the map's lines are read from the template and applied here, in
 * order, as nginx applies them, to addresses in the text form nginx writes them in (RFC 5952, as the
 * WHATWG URL parser also writes them); every answer must name the group the service's
 * addressGroup names.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../src/auth/client-address.js';

async function clientMap(): Promise<(remoteAddr: string) => string> {
  const template = await readFile(new URL('../../deploy/nginx/nginx.conf.template', import.meta.url), 'utf8');
  const block = /map \$remote_addr \$conclave_client \{\n([\s\S]*?)\n\s*\}/.exec(template)![1]!;
  const lines = block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const rules = lines
    .filter((line) => line.startsWith('"~'))
    .map((line) => {
      const [, pattern, value] = /^"~(.*)"\s+(\S+);$/.exec(line)!;
      return { pattern: new RegExp(pattern!), value: value! };
    });
  expect(lines.at(-1)).toMatch(/^default\s+\$remote_addr;$/);
  return (remoteAddr) => {
    for (const { pattern, value } of rules) {
      const match = pattern.exec(remoteAddr);
      if (match) return value.replace(/\$(\d)/g, (_, n: string) => match[Number(n)] ?? '');
    }
    return remoteAddr;
  };
}

/** The text nginx gives $remote_addr for an IPv6 peer: lowercase, no leading zeros, the longest zero run shortened. */
const asNginxWrites = (address: string) => new URL(`http://[${address}]/`).hostname.slice(1, -1);

describe("the template's client key", () => {
  it('is the IPv4 address itself, and an IPv6 /64 wherever its "::" falls', async () => {
    const keyOf = await clientMap();
    for (const v4 of ['127.0.0.1', '203.0.113.7']) expect(keyOf(v4)).toBe(v4);
    expect(keyOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    const addresses = [
      '2001:db8:1:2:3:4:5:6',
      '2001:db8:1:2::6',
      '2001:db8:1:2::',
      '2001:db8:1::5:6',
      '2001:db8:1:0:0:4:5:6',
      '2001:db8::3:4:5:6',
      '2001:db8::6',
      '2001:db8::',
      '2001::3:4:5:6:7',
      '2001:0:0:4:5:6:7:8',
      '2001::4:5:6:7:8',
      '2001::5:6:7:8',
      '2001::8',
      '::3:4:5:6:7:8',
      '0:0:0:4:5:6:7:8',
      '::4:5:6:7:8',
      '::5:6:7:8',
      '::1',
      '::',
      '0:0:1:0:0:0:0:1',
      'fe80::1:2:3:4',
      '2a02:c7f:abcd:ef01:1234:5678:9abc:def0',
      '2001:DB8:0:0:1:0:0:1',
    ];
    for (const address of addresses) {
      const text = asNginxWrites(address);
      expect(keyOf(text), `${address} written ${text}`).toBe(addressGroup(address));
    }
    // One /64, however many of its addresses a client uses; the next /64 is another client.
    expect(keyOf(asNginxWrites('2001:db8:7:7::1'))).toBe(keyOf(asNginxWrites('2001:db8:7:7:ffff:1:2:3')));
    expect(keyOf(asNginxWrites('2001:db8:7:8::1'))).not.toBe(keyOf(asNginxWrites('2001:db8:7:7::1')));
  });
});
