/**
 * The client a per-client limit counts: the socket's peer, or, when that peer is a configured trusted
 * proxy (TRUSTED_PROXIES), the last address in X-Forwarded-For that is not itself a trusted proxy (the
 * entries left of it are whatever the client claimed). IPv6 clients are bucketed by their /64, since one
 * subscriber holds a whole /64 and could otherwise rotate through 2^64 addresses.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

export function trustedProxyList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const type = isIPv6(addr) ? 'ipv6' : 'ipv4';
    if (!isIPv4(addr) && !isIPv6(addr)) throw new Error(`TRUSTED_PROXIES: '${e}' is not an IP address or CIDR`);
    if (bits !== undefined) list.addSubnet(addr, Number(bits), type);
    else list.addAddress(addr, type);
  }
  return list;
}

const unmap = (ip: string): string => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip);

const isTrusted = (proxies: BlockList, ip: string): boolean =>
  isIPv4(ip) ? proxies.check(ip, 'ipv4') : isIPv6(ip) ? proxies.check(ip, 'ipv6') : false;

export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, proxies: BlockList): string {
  let ip = unmap(peer ?? '');
  if (!isTrusted(proxies, ip) || !forwardedFor) return ip;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => unmap(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i];
    if (!isIPv4(ip) && !isIPv6(ip)) return ip; // garbage from the client: counted as one bucket of its own
    if (!isTrusted(proxies, ip)) return ip;
  }
  return ip;
}

/** The bucket a limit counts: the IPv4 address, or the /64 of an IPv6 address. */
export function clientBucket(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const groups = expandIPv6(ip);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : ip;
}

function expandIPv6(ip: string): string[] | null {
  const [head, tail] = ip.split('%')[0].split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined ? (tail ? tail.split(':') : []) : [];
  if (t.some((g) => g.includes('.')) || h.some((g) => g.includes('.'))) return null; // embedded IPv4: keep whole
  const fill = tail !== undefined ? Array(8 - h.length - t.length).fill('0') : [];
  const all = [...h, ...fill, ...t];
  return all.length === 8 ? all.map((g) => parseInt(g, 16).toString(16)) : null;
}
