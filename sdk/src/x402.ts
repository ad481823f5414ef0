/**
 * x402 (pay-per-request) for a merchant's own Node resource server, and for agents that pay such servers.
 *
 *   // server: node:http or Express
 *   const pay = requirePayment({ serviceUrl, apiKey, amount_subunits: '10000', paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' } });
 *   http.createServer((req, res) => pay(req, res, () => res.end('the paid resource')));
 *   app.get('/report', pay, (req, res) => res.send('the paid resource'));
 *
 *   // agent
 *   const fetchPaid = payingFetch(apiKey, 'wal_…', { serviceUrl });
 *   const res = await fetchPaid('https://api.example/report');
 *
 * Without a proof the server answers 402 with X-PAYMENT-REQUIRED (base64 JSON of the spec's X402Challenge)
 * and PAYMENT-REQUIRED (the x402 v2 PaymentRequired, so `@x402/fetch` and other ecosystem clients pay it;
 * it also carries the flat challenge's fields, for clients that read the spec's challenge there); with
 * X-Service-Payment, PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (x402 v1) it redeems the proof with the
 * service and serves the resource only once it is settled, with PAYMENT-RESPONSE (an x402 v2
 * SettleResponse). A settlement still pending answers 202 with Retry-After (present the same proof again),
 * never a new 402, so nobody pays twice.
 *
 * The header encodings here are the protocol's one implementation: the service (lib/x402/challenge.ts)
 * imports them from this file. Global fetch, atob/btoa and TextEncoder only, so it runs in Node and
 * browsers (requirePayment needs node:http-shaped req/res, payingFetch runs anywhere).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The spec's field list; no other field is ever sent. */
export const CHALLENGE_FIELDS = [
  'version',
  'scheme',
  'network',
  'maxAmountRequired',
  'amount',
  'asset',
  'payTo',
  'recipient',
  'memo',
  'resource',
  'description',
] as const;
/** The spec's flat X402Challenge: only its eleven optional string fields. */
export type X402Challenge = Partial<Record<(typeof CHALLENGE_FIELDS)[number], string>>;

export const X402_VERSION = '1';
/** Headers of the transport (lowercase, as node:http shows them). */
export const HEADERS = {
  required: 'payment-required',
  requiredLegacy: 'x-payment-required',
  payment: 'x-service-payment',
  signature: 'payment-signature',
  /** x402 v1 */
  paymentV1: 'x-payment',
  response: 'payment-response',
} as const;

/** a code unit at or above 0x80: without one, a string's UTF-8 is its own char codes, one byte each */
const NON_ASCII = /[\u0080-\uffff]/;
/** a byte string (atob's) holding a byte of a multi-byte UTF-8 sequence */
const HIGH_BYTE = /[\x80-\xff]/;

/** Base64 of the UTF-8 JSON of a value (PAYMENT-REQUIRED, X-Service-Payment, PAYMENT-RESPONSE). */
export function encodeHeader(value: unknown): string {
  const json = JSON.stringify(value);
  // the usual header is ASCII: btoa takes it as is (the byte-by-byte UTF-8 below is ~10 × slower)
  if (!NON_ASCII.test(json)) return btoa(json);
  const bytes = new TextEncoder().encode(json);
  let binary = '';
  // in slices: String.fromCharCode(...all) overflows the argument limit on large values
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Base64 (or base64url) JSON object; null when it is not one. */
export function decodeHeader(value: string | undefined | null): Record<string, unknown> | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64 * 1024) return null;
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  try {
    const b64 = trimmed.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    // ASCII bytes are their own UTF-8 decoding; only other bytes go through the decoder (~20 × slower)
    const text = HIGH_BYTE.test(binary) ? new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))) : binary;
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Reads a challenge header back, keeping only the spec's string fields. */
export function decodeChallenge(value: string | undefined | null): X402Challenge | null {
  const raw = decodeHeader(value);
  if (!raw) return null;
  const out: X402Challenge = {};
  for (const f of CHALLENGE_FIELDS) if (typeof raw[f] === 'string') out[f] = raw[f] as string;
  return out.memo ? out : null;
}

/**
 * PAYMENT-REQUIRED: the x402 v2 PaymentRequired (`resource.url` the absolute URL paid for), with the flat
 * challenge's fields beside it (all but `resource`, an object in v2) for clients that read the spec's
 * challenge there. Without a v2 offer (a rail standard clients cannot pay), the flat challenge alone.
 */
export function paymentRequiredHeader(
  challenge: X402Challenge,
  v2: { resource: { url: string } } | null | undefined,
  url: string,
  error?: string,
): string {
  if (!v2) return encodeHeader(challenge);
  return encodeHeader({ ...challenge, ...v2, ...(error ? { error } : {}), resource: { ...v2.resource, url } });
}

export interface RequirePaymentOptions {
  /** base URL of the payment service, e.g. https://pay.example.com */
  serviceUrl: string;
  /** the merchant's API key (service_sk_…) */
  apiKey: string;
  amount_subunits?: string;
  /** a published catalog price instead of amount_subunits */
  price_id?: string;
  paymentMethod: { chain: string; network: string; token: string };
  description?: string;
  /** challenge lifetime (default 5m) */
  expires_in?: string;
  /** what is paid for; must be the same for the 402 and the paid retry (default: the request's path and query) */
  resource?: (req: IncomingMessage) => string;
  fetch?: typeof fetch;
}

type Next = (err?: unknown) => void;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function requirePayment(o: RequirePaymentOptions): (req: IncomingMessage, res: ServerResponse, next: Next) => Promise<void> {
  const f = o.fetch ?? fetch;
  const base = o.serviceUrl.replace(/\/+$/, '');
  const call = (path: string, body: unknown) =>
    f(`${base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': o.apiKey },
      body: JSON.stringify(body),
    });

  async function challenge(req: IncomingMessage, res: ServerResponse, resource: string, error?: string) {
    const r = await call('/v1/x402/challenges', {
      resource,
      paymentMethod: o.paymentMethod,
      ...(o.price_id ? { price_id: o.price_id } : { amount_subunits: o.amount_subunits }),
      ...(o.description ? { description: o.description } : {}),
      ...(o.expires_in ? { expires_in: o.expires_in } : {}),
    });
    const c = (await r.json()) as {
      header: string;
      challenge: X402Challenge;
      payment_required?: { resource: { url: string } };
      fee_payer?: string;
      chain?: string;
      message?: string;
    };
    if (r.status !== 201) return send(res, 503, { error: 'payment service unavailable', detail: c.message }, { 'Retry-After': '5' });
    // x402 v2 names the resource by its absolute URL; the flat fields ride along for spec clients
    const v2 = paymentRequiredHeader(c.challenge, c.payment_required, absoluteUrl(req), error);
    send(
      res,
      402,
      { x402Version: 1, error: error ?? 'payment required', accepts: [c.challenge], chain: c.chain, fee_payer: c.fee_payer },
      { [HEADERS.required]: v2, [HEADERS.requiredLegacy]: c.header },
    );
  }

  function absoluteUrl(req: IncomingMessage): string {
    const host = headerOf(req, 'host');
    const proto = headerOf(req, 'x-forwarded-proto') ?? ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http');
    return host ? `${proto.split(',')[0].trim()}://${host}${req.url ?? '/'}` : (req.url ?? '/');
  }

  return async (req, res, next) => {
    try {
      const resource = o.resource ? o.resource(req) : (req.url ?? '/');
      const proof = headerOf(req, HEADERS.payment) ?? headerOf(req, HEADERS.signature) ?? headerOf(req, HEADERS.paymentV1);
      if (!proof) return await challenge(req, res, resource);
      const r = await call('/v1/x402/redeem', { proof, resource });
      const body = (await r.json()) as { payment_response?: string; message?: string; challenge_id?: string };
      if (r.status === 200) {
        res.setHeader(HEADERS.response, body.payment_response!);
        return next();
      }
      if (r.status === 202) {
        // paid, not yet settled: the same proof later gets the resource; a new 402 would make them pay twice
        return send(
          res,
          202,
          { status: 'payment_pending', challenge_id: body.challenge_id, retry: 'send the same X-Service-Payment again' },
          { 'Retry-After': '2', [HEADERS.response]: body.payment_response! },
        );
      }
      if (r.status === 402 || r.status === 400 || r.status === 404) return await challenge(req, res, resource, body.message);
      // the service's answer is unknown (5xx): never ask for a new payment
      return send(res, 503, { error: 'payment verification unavailable, retry with the same proof' }, { 'Retry-After': '5' });
    } catch (e) {
      if (!res.headersSent)
        send(res, 503, { error: 'payment verification unavailable, retry with the same proof' }, { 'Retry-After': '5' });
      else next(e);
    }
  };
}

export class PaymentDeclinedError extends Error {
  /** the AgentSpendAttempt (status approval_required or denied, with its reason) */
  readonly attempt: Record<string, unknown>;
  constructor(attempt: Record<string, unknown>) {
    super(`the spend attempt was ${String(attempt.status)}${attempt.reason ? `: ${String(attempt.reason)}` : ''}`);
    this.name = 'PaymentDeclinedError';
    this.attempt = attempt;
  }
}

export interface PayingFetchOptions {
  serviceUrl: string;
  fetch?: typeof fetch;
  /** how often a 202 (settlement pending) is retried with the same proof (default 10, 1 s apart) */
  pendingRetries?: number;
}

/** The chain a challenge's asset lives on: 0x contract → Ethereum, base58 mint → Solana, or a native symbol. */
function chainOf(asset: string): { chain: string; token: string } {
  if (asset === 'ETH') return { chain: 'ethereum', token: 'ETH' };
  if (asset === 'SOL') return { chain: 'solana', token: 'SOL' };
  return { chain: /^0x[0-9a-fA-F]{40}$/.test(asset) ? 'ethereum' : 'solana', token: 'USDC' };
}

/**
 * A fetch that meets a 402 with a spend attempt of the agent wallet (reference = the challenge memo, so a
 * retry never pays twice) and retries with X-Service-Payment = the attempt's spend_reference. Throws
 * PaymentDeclinedError when the wallet's policy does not allow the payment (denied or awaiting approval).
 */
export function payingFetch(
  apiKey: string,
  agentWalletId: string,
  o: PayingFetchOptions,
): (input: string | URL, init?: RequestInit) => Promise<Response> {
  const f = o.fetch ?? fetch;
  const base = o.serviceUrl.replace(/\/+$/, '');
  let rails: Array<{ chain: string; network: string; token: string; decimals: number }> | null = null;

  return async (input, init = {}) => {
    const first = await f(input, init);
    if (first.status !== 402) return first;
    const c = decodeChallenge(first.headers.get(HEADERS.required) ?? first.headers.get(HEADERS.requiredLegacy));
    if (!c?.payTo || !c.amount || !c.asset || !c.network) return first;
    // the chain is not a challenge field: the body of this module's 402 names it; else the asset tells
    const said = await first
      .clone()
      .json()
      .then(
        (b: { chain?: unknown }) => (typeof b?.chain === 'string' ? b.chain : null),
        () => null,
      );
    const guess = chainOf(c.asset);
    const chain = said ?? guess.chain;
    const token = c.asset === 'ETH' || c.asset === 'SOL' ? c.asset : 'USDC';
    rails ??= (await (await f(`${base}/v1/payment_methods`)).json()) as typeof rails;
    const rail = rails!.find((r) => r.chain === chain && r.network === c.network && r.token === token);
    if (!rail) return first;
    const units = BigInt(c.amount);
    const scale = 10n ** BigInt(rail.decimals);
    const amount = Number(`${units / scale}.${(units % scale).toString().padStart(rail.decimals, '0')}`);
    const r = await f(`${base}/v1/agent-wallets/${agentWalletId}/spend-attempts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      // api_domain: the host being paid, which a policy's allowed_api_domains is checked against
      body: JSON.stringify({
        target: c.payTo,
        amount,
        amount_subunits: c.amount,
        token_symbol: token,
        chain,
        network: c.network,
        reference: c.memo,
        api_domain: new URL(String(input)).hostname,
        ...(c.resource ? { metadata: { resource: c.resource } } : {}),
      }),
    });
    const attempt = (await r.json()) as Record<string, unknown>;
    if (r.status >= 300) throw new Error(`spend attempt refused: ${r.status} ${String(attempt.message)}`);
    if (attempt.status !== 'pending' || typeof attempt.spend_reference !== 'string') throw new PaymentDeclinedError(attempt);
    const headers = new Headers(init.headers);
    headers.set('X-Service-Payment', attempt.spend_reference);
    for (let i = 0; ; i++) {
      const paid = await f(input, { ...init, headers });
      if (paid.status !== 202 || i >= (o.pendingRetries ?? 10)) return paid;
      await new Promise((res) => setTimeout(res, 1000));
    }
  };
}
