import ipaddr from 'ipaddr.js';
import { describe, expect, it, vi } from 'vitest';
import { clientBucket } from '../../src-api/http/rate-limit';

describe('clientBucket', () => {
  it('counts IPv4 alone, IPv4-mapped as IPv4, IPv6 by its /64, and anything else as given', () => {
    expect(clientBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(clientBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientBucket('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(clientBucket('not an address')).toBe('not an address');
  });

  it('parses an address once, however many requests it sends', () => {
    const parse = vi.spyOn(ipaddr, 'isValid');
    try {
      for (let i = 0; i < 5; i++) expect(clientBucket('2001:db8:aa:bb::1')).toBe('2001:db8:aa:bb::/64');
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });
});
