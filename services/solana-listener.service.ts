/**
 * The Solana chain listener: for each Solana network with SOLANA_<NET>_RPC_URL set, finds SOL and USDC
 * (SOLANA_<NET>_USDC_MINT) deposits to session addresses at SOLANA_<NET>_COMMITMENT, stores them and pays
 * the session actors (lib/chains/solana-listener.ts, lib/chains/deposits.ts). One node of a cluster
 * listens to a network at a time (a lease in the store); every node with this service redelivers stored
 * deposits that a session has not acknowledged yet. Without an RPC URL the service starts and does nothing.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { ListenerSet } from '../lib/chains/listener-service.ts';
import { SolanaRailListener, type SolPassStats } from '../lib/chains/solana-listener.ts';
import type { SessionMsg, SessionReply } from '../actors/payment-session.ts';

/**
 * a Solana session address stays watched this long after expires_at (late payments, overpayments):
 * shorter than on Ethereum because every watched address costs RPC calls on every poll
 */
export const SOLANA_WATCH_AFTER_EXPIRY_MS = 86_400_000;

type ListenerLogger = { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
type Self = { listeners: ListenerSet<SolPassStats>; broker: { nodeID: string; call(a: string, p: unknown): Promise<unknown> }; logger: ListenerLogger };

export function createSolanaListenerService(rt: Runtime): ServiceSchema {
  return {
    name: 'solana-listener',
    actions: {
      /** per network: lease holder, passes, the last pass's numbers (operators, tests) */
      status: {
        visibility: 'public',
        handler(this: Self) {
          return this.listeners.status();
        },
      },
      /** runs one pass on each network now (where this node holds the lease) and the redelivery scan */
      poll: {
        visibility: 'public',
        async handler(this: Self, _ctx: Context) {
          const passes = await this.listeners.pollNow();
          const redelivered = await this.listeners.redeliverNow();
          return { passes, redelivered };
        },
      },
    },
    created(this: Self) {
      this.listeners = new ListenerSet<SolPassStats>({
        chain: 'solana', rt, nodeId: this.broker.nodeID, log: this.logger, keepAfterExpiryMs: SOLANA_WATCH_AFTER_EXPIRY_MS,
        send: (id, msg: SessionMsg) => this.broker.call('session-actors.send', { id, msg }) as Promise<SessionReply>,
        makeScanner: (network, cfg, deps) => {
          if (!cfg.usdcToken) this.logger.warn(`solana ${network}: SOLANA_${network.toUpperCase()}_USDC_MINT is not set: USDC deposits are not recognised`);
          if (cfg.commitment === 'processed') this.logger.warn(`solana ${network}: commitment processed is read as confirmed (the lowest level getSignaturesForAddress accepts)`);
          return new SolanaRailListener({
            network, rpcUrl: cfg.rpcUrl, usdcMint: cfg.usdcToken, commitment: cfg.commitment,
            store: rt.store, book: deps.book, ledger: deps.ledger, now: () => rt.now(), log: this.logger,
          });
        },
      });
    },
    started(this: Self) {
      this.listeners.start();
      if (this.listeners.networks.length) this.logger.info(`solana listener configured for ${this.listeners.networks.join(', ')}`);
    },
    async stopped(this: Self) {
      await this.listeners.stop();
    },
  } as unknown as ServiceSchema;
}
