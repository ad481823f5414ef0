/**
 * The Solana chain listener: for each Solana network with SOLANA_<NET>_RPC_URL set, finds SOL and USDC
 * (SOLANA_<NET>_USDC_MINT) deposits to session addresses at SOLANA_<NET>_COMMITMENT, stores them and pays
 * the session actors (lib/chains/solana/listener.ts, lib/chains/deposit-inbox.ts). One node of a cluster
 * listens to a network at a time (a lease in the store); every node with this service redelivers stored
 * deposits that a session has not acknowledged yet. Without an RPC URL the service starts and does nothing.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { SolanaRailListener, type SolPassStats } from '../lib/chains/solana/listener.ts';
import { chainListenerService } from '../mixins/chain-listener.mixin.ts';

/**
 * a Solana session address stays watched this long after expires_at (late payments, overpayments):
 * shorter than on Ethereum because every watched address costs RPC calls on every poll
 */
export const SOLANA_WATCH_AFTER_EXPIRY_MS = 86_400_000;

export function createSolanaListenerService(rt: Runtime): ServiceSchema {
  return chainListenerService<SolPassStats>(rt, {
    name: 'solana-listener',
    chain: 'solana',
    keepAfterExpiryMs: SOLANA_WATCH_AFTER_EXPIRY_MS,
    makeScanner: (log, network, cfg, deps) => {
      if (!cfg.usdcToken)
        log.warn(`solana ${network}: SOLANA_${network.toUpperCase()}_USDC_MINT is not set: USDC deposits are not recognised`);
      if (cfg.commitment === 'processed')
        log.warn(`solana ${network}: commitment processed is read as confirmed (the lowest level getSignaturesForAddress accepts)`);
      return new SolanaRailListener({
        network,
        rpcUrl: cfg.rpcUrl,
        usdcMint: cfg.usdcToken,
        commitment: cfg.commitment,
        store: rt.store,
        book: deps.book,
        inbox: deps.inbox,
        now: () => rt.now(),
        log,
      });
    },
  });
}
