/**
 * Which addresses a webhook may reach: never private, loopback, link-local, unique-local, CGNAT,
 * multicast, unspecified or cloud-metadata addresses (IPv4-mapped IPv6 included), unless configuration
 * allows private targets. Checked on the address actually dialled, not only on the URL.
 */
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  // ::/96 (IPv4-compatible, with :: and ::1), ::ffff:0:0/96 (IPv4-translated), 6to4 and Teredo wrap IPv4
  // addresses that may be private: none of them is a webhook's place
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['2002::', 16],
  ['2001::', 32],
  // fec0::/10 is the deprecated site-local range: still routed inside some networks
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address, if any. */
function embeddedIpv4(ip: string): string | null {
  const m = /^(?:0*:)*(?:0*:)?(?:::)?(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip.replace(/^\[|\]$/g, ''));
  if (m) return m[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (hex) {
    const a = parseInt(hex[1], 16),
      b = parseInt(hex[2], 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return null;
}

export function isPublicAddress(ip: string): boolean {
  const v4 = isIP(ip) === 4 ? ip : embeddedIpv4(ip);
  if (v4) return !blocked.check(v4, 'ipv4');
  if (isIP(ip) === 6) return !blocked.check(ip, 'ipv6');
  return false;
}

/** What fixes any refused webhook_url (the fix differs by environment, not by reason). */
export const WEBHOOK_URL_REMEDIATION =
  'Use an https URL on a public host; for local development start the service with WEBHOOK_ALLOW_PRIVATE=1 (allows http and private addresses), or leave webhook_url out and receive events with `payments listen --forward-to <local url>`.';

export interface UrlCheck {
  ok: boolean;
  reason?: string;
}

/** Syntax, scheme and (by DNS) the host of a webhook URL; the dialler checks again on connect. */
export async function checkWebhookUrl(raw: unknown, opts: { allowPrivate: boolean; allowHttp?: boolean }): Promise<UrlCheck> {
  if (typeof raw !== 'string' || raw.length > 2048) return { ok: false, reason: 'webhook_url must be a URL of at most 2048 characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'webhook_url is not a valid URL' };
  }
  const httpAllowed = opts.allowHttp ?? opts.allowPrivate;
  if (url.protocol !== 'https:' && !(httpAllowed && url.protocol === 'http:')) return { ok: false, reason: 'webhook_url must use https' };
  if (url.username || url.password) return { ok: false, reason: 'webhook_url must not contain credentials' };
  if (opts.allowPrivate) return { ok: true };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: 'webhook_url host does not resolve' };
    }
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress))
    return { ok: false, reason: 'webhook_url must point to a public address' };
  return { ok: true };
}
