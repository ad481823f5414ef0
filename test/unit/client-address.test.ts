import fc from 'fast-check';
import { clientAddress, clientBucket, trustedProxyList } from '../../lib/core/client-address.ts';

describe('client address for per-client limits', () => {
  const proxies = trustedProxyList(['10.0.0.0/8', '2001:db8:ffff::1']);

  it('ignores X-Forwarded-For unless the peer is a trusted proxy', () => {
    expect(clientAddress('203.0.113.9', '198.51.100.1', proxies)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:203.0.113.9', undefined, proxies)).toBe('203.0.113.9');
  });

  it('takes the last untrusted hop behind trusted proxies, never what the client prepended', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.1', proxies)).toBe('198.51.100.1');
    expect(clientAddress('10.1.2.3', '1.1.1.1, 198.51.100.1, 10.9.9.9', proxies)).toBe('198.51.100.1');
    expect(clientAddress('2001:db8:ffff::1', ['1.1.1.1', '2001:db8:1:2::7'], proxies)).toBe('2001:db8:1:2::7');
    expect(clientAddress('10.1.2.3', 'not-an-ip', proxies)).toBe('not-an-ip');
  });

  it('buckets IPv6 clients by /64 and keeps IPv4 whole', () => {
    expect(clientBucket('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientBucket('203.0.113.9')).toBe('203.0.113.9');
  });

  it('property: every address of one /64 shares a bucket', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    fc.assert(
      fc.property(
        fc.array(group, { minLength: 4, maxLength: 4 }),
        fc.array(group, { minLength: 4, maxLength: 4 }),
        fc.array(group, { minLength: 4, maxLength: 4 }),
        (prefix, a, b) => {
          expect(clientBucket([...prefix, ...a].join(':'))).toBe(clientBucket([...prefix, ...b].join(':')));
        },
      ),
    );
  });

  it('refuses a malformed TRUSTED_PROXIES entry', () => {
    expect(() => trustedProxyList(['proxy.example'])).toThrow(/TRUSTED_PROXIES/);
  });
});
