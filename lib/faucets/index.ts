/**
 * Testnet faucets: the configured public faucets of the enabled testnet rails, and a local drip on
 * development chains (a rail whose RPC URL is a loopback address; for Ethereum the node's chain id must
 * also be a development one). A drip is a transfer from the platform gas wallet of that chain, sent
 * through the transaction outbox (lib/chains/broadcast), so it is persisted before it is broadcast.
 */
import { getAddress } from 'ethers';
import { PublicKey } from '@solana/web3.js';
import type { Config } from '../../config/index.ts';
import type { FaucetEntry } from '../../config/faucets.ts';
import { findRail, type Rail } from '../../config/rails.ts';
import { toSubunits } from '../core/money.ts';
import { isLocalRpc } from '../addresses/addresses.ts';
import { gasWalletRef } from '../treasury/gas-wallet.ts';
import type { TxIntent } from '../chains/broadcast/types.ts';

/** Chain ids of local Ethereum development nodes: Hardhat and Anvil (31337), Ganache and geth --dev (1337). */
export const DEV_CHAIN_IDS = new Set([31337, 1337]);

export interface FaucetView extends FaucetEntry {
  /** true: the service's own drip (POST /v1/sandbox/faucets/drip with a sandbox key) */
  local: boolean;
}

export class DripRefusal extends Error {}

export { isLocalRpc };

type FaucetConfig = Pick<Config, 'rails' | 'chains' | 'faucets' | 'publicUrl'>;

const rpcOf = (c: Pick<Config, 'chains'>, chain: string, network: string): string =>
  (c.chains as Record<string, Record<string, { rpcUrl: string }> | undefined>)[chain]?.[network]?.rpcUrl ?? '';

/** Testnet rails on which the local drip works. */
export function dripRails(c: FaucetConfig): Rail[] {
  if (c.faucets.drip === 'off') return [];
  return c.rails.filter((r) => r.network === 'testnet' && isLocalRpc(rpcOf(c, r.chain, r.network)) && c.faucets.dripAmounts[r.token]);
}

/** The faucet list: configured faucets of enabled testnet rails, then the local drips; never a rail that is not enabled. */
export function faucetList(c: FaucetConfig): FaucetView[] {
  const enabled = (f: { chain: string; network: string; token: string }) =>
    f.network === 'testnet' && !!findRail(c.rails, f.chain, f.network, f.token);
  const local = dripRails(c).map((r): FaucetView => ({
    chain: r.chain,
    network: r.network,
    token: r.token,
    name: 'Local development faucet',
    url: `${c.publicUrl}/v1/sandbox/faucets/drip`,
    amount: `${c.faucets.dripAmounts[r.token]} ${r.token}`,
    interval: `one drip per address every ${Math.round(c.faucets.dripIntervalMs / 60_000)} min`,
    notes: `POST {"address", "chain": "${r.chain}", "token": "${r.token}"} with a sandbox X-API-Key; sent from the development gas wallet of this local chain.`,
    local: true,
  }));
  // on a local chain the public faucets (for the public testnet) do not apply
  const localKeys = new Set(local.map((f) => `${f.chain}:${f.token}`));
  const configured = c.faucets.list
    .filter((f) => enabled(f) && !isLocalRpc(rpcOf(c, f.chain, f.network)) && !localKeys.has(`${f.chain}:${f.token}`))
    .map((f): FaucetView => ({ ...f, local: false }));
  return [...configured, ...local];
}

/** A checksummed Ethereum address or a base58 Solana public key; DripRefusal otherwise. */
export function normalizeAddress(chain: string, address: string): string {
  try {
    if (chain === 'ethereum') {
      if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error('shape');
      return getAddress(address.toLowerCase());
    }
    return new PublicKey(address).toBase58();
  } catch {
    throw new DripRefusal(`address is not a valid ${chain} address`);
  }
}

export interface DripPlan {
  rail: Rail;
  address: string;
  amount: string;
  amountSubunits: bigint;
  intent: TxIntent;
  rpcUrl: string;
}

/** What a drip sends, or a DripRefusal saying why it cannot be sent on this chain. */
export function planDrip(c: FaucetConfig, req: { address: string; chain: string; token: string }): DripPlan {
  const token = req.token.toUpperCase();
  const rail = findRail(c.rails, req.chain, 'testnet', token);
  if (!rail) throw new DripRefusal(`no enabled testnet rail is ${req.chain}:testnet:${token}; see GET /v1/payment_methods`);
  if (!dripRails(c).includes(rail)) {
    throw new DripRefusal(
      `the drip works only on a local development chain, and ${req.chain} testnet is not one; use the public faucets of GET /v1/sandbox/faucets`,
    );
  }
  const address = normalizeAddress(rail.chain, req.address);
  const amount = c.faucets.dripAmounts[token];
  const units = toSubunits(amount, rail.decimals);
  const rpcUrl = rpcOf(c, rail.chain, 'testnet');
  const usdc = c.chains[rail.chain].testnet.usdcToken;
  const gas = gasWalletRef(rail.chain, 'testnet');
  let intent: TxIntent;
  if (rail.kind === 'native') {
    intent =
      rail.chain === 'ethereum'
        ? { chain: 'ethereum', kind: 'native', from: gas, to: address, value: units.toString() }
        : { chain: 'solana', kind: 'native', from: gas, to: address, lamports: units.toString(), fee_payer: gas };
  } else {
    if (!usdc) throw new DripRefusal(`${rail.chain} testnet has no USDC ${rail.chain === 'ethereum' ? 'contract' : 'mint'} configured`);
    intent =
      rail.chain === 'ethereum'
        ? { chain: 'ethereum', kind: 'erc20', from: gas, token: usdc, to: address, amount: units.toString() }
        : {
            chain: 'solana',
            kind: 'spl',
            from: gas,
            mint: usdc,
            decimals: rail.decimals,
            to: address,
            amount: units.toString(),
            fee_payer: gas,
          };
  }
  return { rail, address, amount, amountSubunits: units, intent, rpcUrl };
}
