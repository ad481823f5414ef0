/**
 * The x402 challenge (the spec's flat X402Challenge: only its eleven optional string fields) and the
 * header encodings: base64 JSON for PAYMENT-REQUIRED / X-PAYMENT-REQUIRED, X-Service-Payment and
 * PAYMENT-RESPONSE. Pure.
 */

/** The spec's field list; no other field is ever sent. */
export const CHALLENGE_FIELDS = [
  'version', 'scheme', 'network', 'maxAmountRequired', 'amount', 'asset', 'payTo', 'recipient', 'memo', 'resource', 'description',
] as const;
export type X402Challenge = Partial<Record<(typeof CHALLENGE_FIELDS)[number], string>>;

export const X402_VERSION = '1';
/** Headers of the transport (lowercase, as node:http shows them). */
export const HEADERS = {
  required: 'payment-required',
  requiredLegacy: 'x-payment-required',
  payment: 'x-service-payment',
  signature: 'payment-signature',
  response: 'payment-response',
} as const;

export interface ChallengeInput {
  /** the challenge id, also the memo every proof must carry */
  id: string;
  network: 'testnet' | 'mainnet';
  amount_subunits: string;
  /** token contract (Ethereum), mint (Solana), or the native symbol (ETH, SOL) */
  asset: string;
  /** the merchant's wallet address on the chain */
  pay_to: string;
  resource: string;
  description?: string;
}

export function buildChallenge(c: ChallengeInput): X402Challenge {
  return {
    version: X402_VERSION,
    scheme: 'exact',
    network: c.network,
    maxAmountRequired: c.amount_subunits,
    amount: c.amount_subunits,
    asset: c.asset,
    payTo: c.pay_to,
    recipient: c.pay_to,
    memo: c.id,
    resource: c.resource,
    ...(c.description !== undefined ? { description: c.description } : {}),
  };
}

export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Base64 (or base64url) JSON object; null when it is not one. */
export function decodeHeader(value: string | undefined | null): Record<string, unknown> | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64 * 1024) return null;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value.trim())) return null;
  try {
    const parsed = JSON.parse(Buffer.from(value.trim(), 'base64').toString('utf8'));
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
