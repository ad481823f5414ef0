/**
 * One webhook HTTP attempt, guarded against SSRF on the address actually connected:
 * - the scheme must be https (http only where configuration allows private targets);
 * - the host is resolved here, and unless private targets are allowed EVERY candidate address must be
 *   public (lib/webhooks/net-guard.ts: no loopback, private, link-local, metadata, IPv4-mapped IPv6 of those…);
 * - the socket connects to one of those vetted addresses (the `lookup` hook answers with them, so no
 *   second DNS answer can be substituted), with the original Host header and TLS SNI;
 * - redirects are never followed (a 3xx is a failure), only 2xx is success;
 * - one deadline covers DNS, connect, TLS and the response headers;
 * - at most `maxResponseBytes` of the response body are read, then the socket is dropped; the body is
 *   never kept.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { performance } from 'node:perf_hooks';
import { isPublicAddress } from './net-guard.ts';

export type DeliveryErrorClass =
  /** not a URL, credentials in the URL */
  | 'invalid_url'
  /** the scheme is not allowed (http without WEBHOOK_ALLOW_PRIVATE) */
  | 'blocked_url'
  /** the host is, or resolves to, a non-public address */
  | 'blocked_address'
  | 'dns_error'
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'tls_error'
  | 'network_error'
  /** a 3xx answer: redirects are not followed */
  | 'redirect'
  /** any other non-2xx answer */
  | 'http_error';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface DialOptions {
  allowPrivate: boolean;
  /** plain http; defaults to allowPrivate (as at registration) */
  allowHttp?: boolean;
  /** one deadline for the whole attempt */
  timeoutMs: number;
  /** response body bytes read at most (default 64 KiB) */
  maxResponseBytes?: number;
  /** the resolver (tests); default: the system resolver, every address */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  /** extra TLS trust (tests: a private CA) */
  ca?: string | Buffer;
}

export interface DialResult {
  ok: boolean;
  /** the HTTP status when an answer arrived */
  status: number | null;
  latencyMs: number;
  error: DeliveryErrorClass | null;
  /** the address connected to (not stored in the delivery log) */
  remoteAddress: string | null;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

const defaultResolve = async (host: string): Promise<ResolvedAddress[]> => dnsLookup(host, { all: true, verbatim: true });

function classify(err: unknown): DeliveryErrorClass {
  const e = err as { code?: string; name?: string; message?: string };
  const code = e?.code ?? '';
  if (e?.name === 'AbortError' || code === 'ABORT_ERR' || code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(e?.message ?? '')) return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA' || code === 'ESERVFAIL') return 'dns_error';
  if (
    /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code) ||
    /SSL|TLS|certificate/i.test(e?.message ?? '')
  )
    return 'tls_error';
  return 'network_error';
}

/** A `lookup` hook for net.connect that only ever answers with the vetted addresses. */
function pinnedLookup(vetted: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: unknown, callback?: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (
      err: Error | null,
      address: string | ResolvedAddress[],
      family?: number,
    ) => void;
    const o = (typeof options === 'object' && options !== null ? options : {}) as { all?: boolean; family?: number | string };
    const family = o.family === 'IPv4' ? 4 : o.family === 'IPv6' ? 6 : Number(o.family ?? 0);
    const list = family === 4 || family === 6 ? vetted.filter((a) => a.family === family) : vetted;
    if (list.length === 0) {
      const err = Object.assign(new Error('no vetted address of the requested family'), { code: 'ENOTFOUND' });
      process.nextTick(() => cb(err, o.all ? [] : ''));
      return;
    }
    if (o.all) process.nextTick(() => cb(null, list));
    else process.nextTick(() => cb(null, list[0].address, list[0].family));
  }) as LookupFunction;
}

/**
 * Vets a URL for delivery: scheme, credentials and (unless private targets are allowed) every address
 * the host resolves to. Returns the addresses to connect to, or the error class.
 */
export async function vetTarget(
  url: URL,
  opts: Pick<DialOptions, 'allowPrivate' | 'allowHttp' | 'resolve'>,
): Promise<{ addresses: ResolvedAddress[] } | { error: DeliveryErrorClass }> {
  const allowHttp = opts.allowHttp ?? opts.allowPrivate;
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return { error: 'blocked_url' };
  if (url.username || url.password) return { error: 'invalid_url' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await (opts.resolve ?? defaultResolve)(host);
    } catch {
      return { error: 'dns_error' };
    }
  }
  if (addresses.length === 0) return { error: 'dns_error' };
  if (!opts.allowPrivate && !addresses.every((a) => isPublicAddress(a.address))) return { error: 'blocked_address' };
  return { addresses };
}

/** POSTs `body` to `rawUrl` once. Never throws: every outcome is a DialResult. */
export async function postWebhook(
  rawUrl: string,
  body: string | Buffer,
  headers: Record<string, string>,
  opts: DialOptions,
): Promise<DialResult> {
  const t0 = performance.now();
  const done = (r: Omit<DialResult, 'latencyMs'>): DialResult => ({ ...r, latencyMs: Math.round(performance.now() - t0) });
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return done({ ok: false, status: null, error: 'invalid_url', remoteAddress: null });
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  try {
    const vetting = await Promise.race([
      vetTarget(url, opts),
      new Promise<{ error: DeliveryErrorClass }>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve({ error: 'timeout' }), { once: true }),
      ),
    ]);
    if ('error' in vetting) {
      clearTimeout(timer);
      return done({ ok: false, status: null, error: vetting.error, remoteAddress: null });
    }
    const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const isHttps = url.protocol === 'https:';
    const limit = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    return await new Promise<DialResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<DialResult, 'latencyMs'>) => {
        if (settled) return;
        settled = true;
        resolve(done(r));
      };
      const reqOpts: https.RequestOptions = {
        method: 'POST',
        protocol: url.protocol,
        hostname: host,
        port: url.port || (isHttps ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, Host: url.host, 'Content-Length': String(payload.length), Connection: 'close' },
        // a fresh connection per attempt: no pooled socket to an earlier resolution is ever reused
        agent: false,
        lookup: pinnedLookup(vetting.addresses),
        signal: controller.signal,
        ...(isHttps ? { servername: isIP(host) ? undefined : host, ...(opts.ca ? { ca: opts.ca } : {}) } : {}),
      };
      const req = (isHttps ? https : http).request(reqOpts, (res) => {
        const status = res.statusCode ?? null;
        const remoteAddress = res.socket?.remoteAddress ?? null;
        // read at most `limit` bytes, keep none of them
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > limit) res.destroy();
        });
        const close = () => {
          clearTimeout(timer);
          req.destroy();
        };
        res.once('end', close);
        res.once('close', close);
        res.on('error', close);
        const ok = status !== null && status >= 200 && status < 300;
        finish({
          ok,
          status,
          error: ok ? null : status !== null && status >= 300 && status < 400 ? 'redirect' : 'http_error',
          remoteAddress,
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        finish({ ok: false, status: null, error: controller.signal.aborted ? 'timeout' : classify(err), remoteAddress: null });
      });
      req.end(payload);
    });
  } catch (err) {
    clearTimeout(timer);
    return done({ ok: false, status: null, error: controller.signal.aborted ? 'timeout' : classify(err), remoteAddress: null });
  }
}
