/**
 * The shape both chain-listener services share: a ListenerSet (lease per network, address book, deposit
 * inbox, redelivery) created with the node's id, started and stopped with the service, and the
 * operator actions `status` and `poll`. Each chain supplies its scanner.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { ListenerSet, type ListenerSetOptions, type Logger } from '../lib/chains/listener-service.ts';
import type { SessionMsg, SessionReply } from '../lib/sessions/payment-session.ts';

export interface ChainListenerOptions<S> {
  name: string;
  chain: ListenerSetOptions<S>['chain'];
  /** how long after expires_at a session address stays watched */
  keepAfterExpiryMs: number;
  makeScanner(log: Logger, ...args: Parameters<ListenerSetOptions<S>['makeScanner']>): ReturnType<ListenerSetOptions<S>['makeScanner']>;
}

export function chainListenerService<S>(rt: Runtime, o: ChainListenerOptions<S>): ServiceSchema {
  // one ListenerSet per service instance: the factory runs once per service the broker creates
  let listeners: ListenerSet<S> | null = null;
  return {
    name: o.name,
    actions: {
      /** per network: lease holder, passes, the last pass's numbers (operators, tests) */
      status: {
        visibility: 'public',
        handler() {
          return listeners!.status();
        },
      },
      /** runs one pass on each network now (where this node holds the lease) and the redelivery scan */
      poll: {
        visibility: 'public',
        async handler() {
          const passes = await listeners!.pollNow();
          const redelivered = await listeners!.redeliverNow();
          return { passes, redelivered };
        },
      },
    },
    created() {
      listeners = new ListenerSet<S>({
        chain: o.chain,
        rt,
        nodeId: this.broker.nodeID,
        log: this.logger,
        keepAfterExpiryMs: o.keepAfterExpiryMs,
        send: (id, msg: SessionMsg) => this.broker.call('session-actors.send', { id, msg }) as Promise<SessionReply>,
        makeScanner: (network, cfg, deps) => o.makeScanner(this.logger, network, cfg, deps),
      });
    },
    started() {
      listeners!.start();
      if (listeners!.networks.length) this.logger.info(`${o.chain} listener configured for ${listeners!.networks.join(', ')}`);
    },
    async stopped() {
      await listeners?.stop();
    },
  };
}
