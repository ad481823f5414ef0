/**
 * Which network a merchant's money lives on, decided in one place (the environment gate): sandbox
 * merchants are paid in testnet tokens only, live merchants in mainnet tokens only, and mainnet needs a
 * verified KYC. A live checkout, session or x402 challenge on a testnet rail would let a buyer "pay" a
 * real merchant with free faucet tokens. Sessions, payouts, wallets, agent spends and x402 challenges all
 * ask `networkGate`; each words the refusal for its own request field.
 */
import { forbidden, type ServiceError } from './errors.ts';

export type Network = 'testnet' | 'mainnet';

export const networkOf = (sandbox: boolean): Network => (sandbox ? 'testnet' : 'mainnet');

export const allowsNetwork = (sandbox: boolean, network: string): boolean => network === networkOf(sandbox);

/** What the gate reads of a merchant: its environment and its KYC status. */
export interface MerchantStanding {
  sandbox: boolean;
  kyc_status?: string | null;
}

export interface NetworkRefusal {
  /** sandbox_mainnet: a sandbox merchant off testnet; live_testnet: a live merchant off mainnet; kyc_required: mainnet before KYC */
  reason: 'sandbox_mainnet' | 'live_testnet' | 'kyc_required';
  message: string;
  /** asking for mainnet without the right is an abuse signal (outcome mainnet_kyc_required); a live merchant asking for testnet is not */
  abuse: boolean;
}

/**
 * The environment gate: null when the merchant may move money on `network`, else why not. `what` names
 * the thing refused in the KYC message ("payment sessions", "payouts").
 */
export function networkGate(m: MerchantStanding, network: string, what: string): NetworkRefusal | null {
  const abuse = network === 'mainnet';
  if (!allowsNetwork(m.sandbox, network))
    return m.sandbox
      ? {
          reason: 'sandbox_mainnet',
          message: 'sandbox merchants can use testnet rails only; use network testnet, or a live merchant account for mainnet',
          abuse,
        }
      : {
          reason: 'live_testnet',
          message:
            'live merchants are paid on mainnet rails only (testnet tokens have no value); use network mainnet, or a sandbox merchant for testnet',
          abuse,
        };
  if (network === 'mainnet' && m.kyc_status !== 'verified')
    return {
      reason: 'kyc_required',
      message: `mainnet ${what} require KYC verification of the merchant; complete KYC with the operator`,
      abuse,
    };
  return null;
}

/**
 * The gate's refusal as the API answers it: 403 on the request field that chose the network, with what to
 * do instead (`otherNetwork`: the request's own wording for a sandbox and a live merchant on the wrong one).
 */
export function networkForbidden(r: NetworkRefusal, field: string, otherNetwork: { sandbox: string; live: string }): ServiceError {
  const remediation =
    r.reason === 'kyc_required'
      ? 'Ask the operator to verify your KYC (`npm run operator -- set-kyc <merchant_id> verified`).'
      : r.reason === 'sandbox_mainnet'
        ? otherNetwork.sandbox
        : otherNetwork.live;
  return forbidden(r.message, { field, remediation });
}
