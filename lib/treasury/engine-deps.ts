/** What every treasury engine (payouts, sweeps, custody moves) is given: the due-scan deps and the outbox. */
import type { Config } from '../../config/index.ts';
import type { ScanDeps } from '../chains/engine.ts';
import type { Broadcaster } from '../chains/broadcast/outbox.ts';
import type { TxDriver } from '../chains/broadcast/types.ts';
import type { GasWallets } from './gas-wallet.ts';

export interface TreasuryDeps extends ScanDeps {
  broadcaster: Broadcaster;
  config: Pick<Config, 'rails' | 'chains'>;
  driver(chain: string, network: string): TxDriver | null;
  gas: GasWallets;
  /** how long waiting work waits before it is tried again (default 30 s) */
  retryMs?: number;
}

/** the chain's native asset key (`ethereum:testnet:ETH`), in which network fees are paid */
export const nativeAsset = (r: { chain: string; network: string }): string =>
  `${r.chain}:${r.network}:${r.chain === 'ethereum' ? 'ETH' : 'SOL'}`;
