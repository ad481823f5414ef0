/** The transaction drivers of the configured chains and networks (null where no RPC URL is set). */
import type { Config } from '../../../config/index.ts';
import { ethProvider, solConnection } from '../clients.ts';
import { EthereumTxDriver } from '../ethereum/tx-driver.ts';
import { SolanaTxDriver } from '../solana/tx-driver.ts';
import type { Signer } from '../signer.ts';
import type { TxDriver } from './types.ts';

export function configuredDrivers(config: Pick<Config, 'chains'>, signer: Signer): (chain: string, network: string) => TxDriver | null {
  const cache = new Map<string, TxDriver | null>();
  return (chain, network) => {
    const key = `${chain}:${network}`;
    if (cache.has(key)) return cache.get(key)!;
    let d: TxDriver | null = null;
    const cfg = (config.chains as Record<string, Record<string, Config['chains']['ethereum']['testnet']> | undefined>)[chain]?.[network];
    if (cfg?.rpcUrl) {
      d =
        chain === 'ethereum'
          ? new EthereumTxDriver({
              network,
              provider: () => ethProvider(cfg.rpcUrl),
              signer,
              confirmations: Math.max(1, cfg.confirmations),
            })
          : new SolanaTxDriver({ network, connection: () => solConnection(cfg.rpcUrl), signer, commitment: cfg.commitment });
    }
    cache.set(key, d);
    return d;
  };
}
