/**
 * The x402 module for payers outside the service, exported as `stablecoin-payment-service/x402` (README
 * "Agent wallets and x402"): the EIP-3009 and Solana proof builders (they need ethers, @solana/web3.js and
 * the service's chain helpers). The resource-server and agent helpers are the SDK's
 * (`@stablecoin-payments/sdk`, sdk/src/x402.ts); re-exported here so existing imports keep working.
 */
export {
  requirePayment,
  payingFetch,
  PaymentDeclinedError,
  type RequirePaymentOptions,
  type PayingFetchOptions,
} from '@stablecoin-payments/sdk/x402';
export { buildChallenge, decodeChallenge, encodeHeader, decodeHeader, HEADERS, CHALLENGE_FIELDS, type X402Challenge } from './challenge.ts';
export { signEip3009Proof, buildSolanaProof, type Eip3009Options, type SolanaProofOptions } from './payer.ts';
export { memoNonce } from './proof.ts';
