/**
 * Which network a merchant's money lives on, decided in one place: sandbox merchants are paid in testnet
 * tokens only, live merchants in mainnet tokens only. A live checkout or session on a testnet rail would
 * let a buyer "pay" a real merchant with free faucet tokens.
 */
export type Network = 'testnet' | 'mainnet';

export const networkOf = (sandbox: boolean): Network => (sandbox ? 'testnet' : 'mainnet');

export const allowsNetwork = (sandbox: boolean, network: string): boolean => network === networkOf(sandbox);

/** The refusal for a merchant asking for a rail on the other network, or null when the network is its own. */
export function networkRefusal(sandbox: boolean, network: string): string | null {
  if (allowsNetwork(sandbox, network)) return null;
  return sandbox
    ? 'sandbox merchants can use testnet rails only; use network testnet, or a live merchant account for mainnet'
    : 'live merchants are paid on mainnet rails only (testnet tokens have no value); use network mainnet, or a sandbox merchant for testnet';
}
