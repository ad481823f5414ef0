/**
 * What settling an x402 proof on chain sends, as transaction-outbox intents (lib/chains/broadcast): the
 * gas wallet's `transferWithAuthorization` call for EIP-3009, and the payer's Solana transaction for the
 * gas wallet to co-sign as fee payer. No store here.
 */
import { Interface } from 'ethers';
import type { VersionedTransaction } from '@solana/web3.js';
import { tokenDomain } from './chain-facts.ts';
import { gasWalletRef } from '../treasury/gas-wallet.ts';
import type { TxIntent } from '../chains/broadcast/types.ts';
import { splitSignature, type Eip3009Authorization } from './proof.ts';

export const EIP3009_ABI = [
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
];
const iface = new Interface(EIP3009_ABI);

/** The token's EIP-712 domain separator (read from the token once per RPC URL: lib/x402/chain-facts.ts). */
export const domainSeparator = async (rpcUrl: string, token: string): Promise<string> => (await tokenDomain(rpcUrl, token)).separator;

export function eip3009Intent(network: string, token: string, a: Eip3009Authorization, signature: string): TxIntent {
  const { v, r, s } = splitSignature(signature);
  const data = iface.encodeFunctionData('transferWithAuthorization', [
    a.from,
    a.to,
    a.value,
    a.validAfter,
    a.validBefore,
    a.nonce,
    v,
    r,
    s,
  ]);
  return { chain: 'ethereum', kind: 'call', from: gasWalletRef('ethereum', network), to: token, data };
}

export function solanaCosignIntent(network: string, tx: VersionedTransaction, payer: string, payTo: string): TxIntent {
  return {
    chain: 'solana',
    kind: 'cosign',
    fee_payer: gasWalletRef('solana', network),
    from: gasWalletRef('solana', network),
    message: Buffer.from(tx.message.serialize()).toString('base64'),
    signatures: tx.signatures.map((s) => Buffer.from(s).toString('base64')),
    from_address: payer,
    to_address: payTo,
  };
}
