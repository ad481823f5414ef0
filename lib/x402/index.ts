/**
 * The x402 module for merchants' resource servers and for payers, exported as
 * `stablecoin-payment-service/x402` (README "Agent wallets and x402").
 */
export { requirePayment, payingFetch, PaymentDeclinedError, type RequirePaymentOptions, type PayingFetchOptions } from './middleware.ts';
export { buildChallenge, decodeChallenge, encodeHeader, decodeHeader, HEADERS, CHALLENGE_FIELDS, type X402Challenge } from './challenge.ts';
export { signEip3009Proof, buildSolanaProof, type Eip3009Options, type SolanaProofOptions } from './payer.ts';
export { memoNonce } from './proof.ts';
