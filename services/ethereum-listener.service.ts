/**
 * The Ethereum chain listener: for each Ethereum network with ETHEREUM_<NET>_RPC_URL set, finds USDC
 * (ETHEREUM_<NET>_USDC_ADDRESS) and ETH deposits to session addresses at ETHEREUM_<NET>_CONFIRMATIONS
 * depth, stores them and pays the session actors (lib/chains/ethereum-listener.ts, lib/chains/deposits.ts).
 * One node of a cluster listens to a network at a time (a lease in the store); every node with this
 * service redelivers stored deposits that a session has not acknowledged yet. Without an RPC URL the
 * service starts and does nothing.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { ListenerSet } from '../lib/chains/listener-service.ts';
import { EthereumRailListener, type EthPassStats } from '../lib/chains/ethereum-listener.ts';
import type { SessionMsg, SessionReply } from '../actors/payment-session.ts';

/** an Ethereum session address stays watched this long after expires_at (late payments, overpayments) */
export const ETHEREUM_WATCH_AFTER_EXPIRY_MS = 30 * 86_400_000;

type Self = { listeners: ListenerSet<EthPassStats>; broker: { nodeID: string; call(a: string, p: unknown): Promise<unknown> }; logger: ListenerLogger };
type ListenerLogger = { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };

export function createEthereumListenerService(rt: Runtime): ServiceSchema {
  return {
    name: 'ethereum-listener',
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
      this.listeners = new ListenerSet<EthPassStats>({
        chain: 'ethereum', rt, nodeId: this.broker.nodeID, log: this.logger, keepAfterExpiryMs: ETHEREUM_WATCH_AFTER_EXPIRY_MS,
        send: (id, msg: SessionMsg) => this.broker.call('session-actors.send', { id, msg }) as Promise<SessionReply>,
        makeScanner: (network, cfg, deps) => {
          if (!cfg.usdcToken) this.logger.warn(`ethereum ${network}: ETHEREUM_${network.toUpperCase()}_USDC_ADDRESS is not set: USDC deposits are not recognised`);
          return new EthereumRailListener({
            network, rpcUrl: cfg.rpcUrl, usdcAddress: cfg.usdcToken, confirmations: cfg.confirmations,
            store: rt.store, book: deps.book, ledger: deps.ledger, now: () => rt.now(), log: this.logger,
          });
        },
      });
    },
    started(this: Self) {
      this.listeners.start();
      if (this.listeners.networks.length) this.logger.info(`ethereum listener configured for ${this.listeners.networks.join(', ')}`);
    },
    async stopped(this: Self) {
      await this.listeners.stop();
    },
  } as unknown as ServiceSchema;
}
