/**
 * Replay protection: an x402 payment proof is redeemed once, ever. Each proof has a replay key naming what
 * makes it unique on its chain: an EIP-3009 authorization's token, signer and nonce; a Solana transaction's
 * fee-payer signature; an agent spend's attempt. The redemption row stores it as `proof_key` under a unique
 * index (lib/store/schema/agents.ts), so the same proof presented twice, at once or later, on this challenge
 * or another, is inserted once; the row's id (the challenge id) makes a challenge paid once.
 */
export const replayKey = {
  eip3009: (network: string, asset: string, from: string, nonce: string): string =>
    `eip3009:${network}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`,
  solana: (network: string, signatureHex: string): string => `solana:${network}:${signatureHex}`,
  agent: (attemptId: string): string => `agent:${attemptId}`,
};
