/**
 * The service's side of the x402 challenge: building the spec's flat X402Challenge from a stored
 * challenge. The header encodings (base64 JSON for PAYMENT-REQUIRED / X-PAYMENT-REQUIRED,
 * X-Service-Payment and PAYMENT-RESPONSE) live in the SDK (sdk/src/x402.ts). Pure.
 */

import { X402_VERSION, type X402Challenge } from '@stablecoin-payments/sdk/x402';

// the wire format (fields, headers, base64 JSON) is the SDK's, one implementation for both ends
export {
  CHALLENGE_FIELDS,
  X402_VERSION,
  HEADERS,
  encodeHeader,
  decodeHeader,
  decodeChallenge,
  type X402Challenge,
} from '@stablecoin-payments/sdk/x402';

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
