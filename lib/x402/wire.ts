/**
 * The ecosystem's x402 v2 wire (the shapes `@x402/core` validates), spoken beside the spec's flat challenge:
 * PaymentRequirements / PaymentRequired for PAYMENT-REQUIRED, the SettleResponse for PAYMENT-RESPONSE, and
 * the facilitator's VerifyResponse and supported kinds. Pure: the CAIP-2 network, the token's EIP-712 domain
 * and the Solana fee payer are facts the caller read from the chain (lib/x402/chain-facts.ts).
 */

export const X402_V2 = 2 as const;

/** One way to pay, as x402 v2 states it (`accepts[]` entry, and the `accepted` a client copies back). */
export interface PaymentRequirements {
  scheme: 'exact';
  /** CAIP-2: eip155:<chain id>, solana:<genesis hash prefix> */
  network: string;
  /** smallest units, digit string */
  amount: string;
  /** token contract (Ethereum) or mint (Solana) */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /**
   * Ethereum: the token's EIP-712 `name` and `version` (what an EIP-3009 authorization is signed over);
   * Solana: `feePayer` (the service's gas wallet) and `memo`; both: `challengeId`, copied back in `accepted`.
   */
  extra: Record<string, unknown>;
}

export interface PaymentRequired {
  x402Version: 2;
  error?: string;
  resource: { url: string; description: string; mimeType: string };
  accepts: PaymentRequirements[];
}

/** PAYMENT-RESPONSE and the facilitator's /settle answer. */
export interface SettleResponse {
  success: boolean;
  /** the settlement's transaction hash or signature ('' when none landed, or an agent wallet paid in the ledger) */
  transaction: string;
  network: string;
  payer?: string;
  errorReason?: string;
  errorMessage?: string;
}

export interface VerifyResponse {
  isValid: boolean;
  payer?: string;
  invalidReason?: string;
  invalidMessage?: string;
}

/** What the chain says about a rail, for its `accepts[]` entry. */
export interface RailFacts {
  chain: 'ethereum' | 'solana';
  /** CAIP-2 id read from the node */
  network: string;
  /** Ethereum: the token's EIP-712 domain */
  domain?: { name: string; version: string };
  /** Solana: the gas wallet that pays the fee */
  feePayer?: string;
}

export interface RequirementsInput {
  challenge_id: string;
  amount_subunits: string;
  asset: string;
  pay_to: string;
  expires_at: string;
}

/**
 * The `accepts[]` entry of a challenge. maxTimeoutSeconds is what is left of the challenge's life (at least
 * one second): an EIP-3009 client signs validBefore = now + maxTimeoutSeconds, so a proof outlives nothing.
 */
export function requirementsOf(c: RequirementsInput, f: RailFacts, now: Date): PaymentRequirements {
  const left = Math.max(1, Math.floor((Date.parse(c.expires_at) - now.getTime()) / 1000));
  const extra: Record<string, unknown> =
    f.chain === 'ethereum'
      ? { name: f.domain!.name, version: f.domain!.version, challengeId: c.challenge_id }
      : { feePayer: f.feePayer!, memo: c.challenge_id, challengeId: c.challenge_id };
  return {
    scheme: 'exact',
    network: f.network,
    amount: c.amount_subunits,
    asset: c.asset,
    payTo: c.pay_to,
    maxTimeoutSeconds: left,
    extra,
  };
}

export function paymentRequired(
  accepts: PaymentRequirements[],
  resource: { url: string; description?: string | null; mimeType?: string },
  error?: string,
): PaymentRequired {
  return {
    x402Version: X402_V2,
    ...(error ? { error } : {}),
    resource: { url: resource.url, description: resource.description ?? '', mimeType: resource.mimeType ?? '' },
    accepts,
  };
}

/** The three equal fields of a client's `accepted` and the requirements it pays (amount, asset, payTo, network, scheme). */
export function sameRequirements(a: Partial<PaymentRequirements>, b: PaymentRequirements): boolean {
  const same = (x: unknown, y: string) =>
    typeof x === 'string' && (b.network.startsWith('eip155:') ? x.toLowerCase() === y.toLowerCase() : x === y);
  return a.scheme === b.scheme && a.network === b.network && a.amount === b.amount && same(a.asset, b.asset) && same(a.payTo, b.payTo);
}
