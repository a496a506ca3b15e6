/** addressGroup: what a per-address limit counts. */
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../../src/auth/client-address.js';

describe('addressGroup', () => {
  it('keeps IPv4 addresses, and maps IPv4-mapped IPv6 to them', () => {
    expect(addressGroup('127.0.0.1')).toBe('127.0.0.1');
    expect(addressGroup('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(addressGroup('::FFFF:10.1.2.3')).toBe('10.1.2.3');
  });

  it('counts IPv6 by its /64, however it is written', () => {
    const group = '2001:db8:1:2::/64';
    expect(addressGroup('2001:db8:1:2::1')).toBe(group);
    expect(addressGroup('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(group);
    expect(addressGroup('2001:DB8:1:2:0:0:0:9')).toBe(group);
    expect(addressGroup('2001:db8:1:2::9%eth0')).toBe(group);
    expect(addressGroup('2001:db8:1:3::1')).not.toBe(group);
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
});
