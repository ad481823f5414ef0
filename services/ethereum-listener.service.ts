/**
 * The Ethereum chain listener: for each Ethereum network with ETHEREUM_<NET>_RPC_URL set, finds USDC
 * (ETHEREUM_<NET>_USDC_ADDRESS) and ETH deposits to session addresses at ETHEREUM_<NET>_CONFIRMATIONS
 * depth, stores them and pays the session actors (lib/chains/ethereum/listener.ts, lib/chains/deposit-inbox.ts).
 * One node of a cluster listens to a network at a time (a lease in the store); every node with this
 * service redelivers stored deposits that a session has not acknowledged yet. Without an RPC URL the
 * service starts and does nothing.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { EthereumRailListener, type EthPassStats } from '../lib/chains/ethereum/listener.ts';
import { chainListenerService } from '../mixins/chain-listener.mixin.ts';

/** an Ethereum session address stays watched this long after expires_at (late payments, overpayments) */
export const ETHEREUM_WATCH_AFTER_EXPIRY_MS = 30 * 86_400_000;

export function createEthereumListenerService(rt: Runtime): ServiceSchema {
  return chainListenerService<EthPassStats>(rt, {
    name: 'ethereum-listener',
    chain: 'ethereum',
    keepAfterExpiryMs: ETHEREUM_WATCH_AFTER_EXPIRY_MS,
    makeScanner: (log, network, cfg, deps) => {
      if (!cfg.usdcToken)
        log.warn(`ethereum ${network}: ETHEREUM_${network.toUpperCase()}_USDC_ADDRESS is not set: USDC deposits are not recognised`);
      return new EthereumRailListener({
        network,
        rpcUrl: cfg.rpcUrl,
        usdcAddress: cfg.usdcToken,
        confirmations: cfg.confirmations,
        store: rt.store,
        book: deps.book,
        inbox: deps.inbox,
        now: () => rt.now(),
        log,
      });
    },
  });
}
