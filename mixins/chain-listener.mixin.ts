/**
 * The shape both chain-listener services share: a ListenerSet (lease per network, address book, deposit
 * inbox, redelivery) created with the node's id, started and stopped with the service, and the
 * operator actions `status` and `poll`. Each chain supplies its scanner.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { ListenerSet, type ListenerSetOptions, type Logger } from '../lib/chains/listener-service.ts';
import type { SessionMsg, SessionReply } from '../lib/sessions/payment-session.ts';

type Self<S> = { listeners: ListenerSet<S>; broker: { nodeID: string; call(a: string, p: unknown): Promise<unknown> }; logger: Logger };

export interface ChainListenerOptions<S> {
  name: string;
  chain: ListenerSetOptions<S>['chain'];
  /** how long after expires_at a session address stays watched */
  keepAfterExpiryMs: number;
  makeScanner(log: Logger, ...args: Parameters<ListenerSetOptions<S>['makeScanner']>): ReturnType<ListenerSetOptions<S>['makeScanner']>;
}

export function chainListenerService<S>(rt: Runtime, o: ChainListenerOptions<S>): ServiceSchema {
  return {
    name: o.name,
    actions: {
      /** per network: lease holder, passes, the last pass's numbers (operators, tests) */
      status: {
        visibility: 'public',
        handler(this: Self<S>) {
          return this.listeners.status();
        },
      },
      /** runs one pass on each network now (where this node holds the lease) and the redelivery scan */
      poll: {
        visibility: 'public',
        async handler(this: Self<S>) {
          const passes = await this.listeners.pollNow();
          const redelivered = await this.listeners.redeliverNow();
          return { passes, redelivered };
        },
      },
    },
    created(this: Self<S>) {
      this.listeners = new ListenerSet<S>({
        chain: o.chain,
        rt,
        nodeId: this.broker.nodeID,
        log: this.logger,
        keepAfterExpiryMs: o.keepAfterExpiryMs,
        send: (id, msg: SessionMsg) => this.broker.call('session-actors.send', { id, msg }) as Promise<SessionReply>,
        makeScanner: (network, cfg, deps) => o.makeScanner(this.logger, network, cfg, deps),
      });
    },
    started(this: Self<S>) {
      this.listeners.start();
      if (this.listeners.networks.length) this.logger.info(`${o.chain} listener configured for ${this.listeners.networks.join(', ')}`);
    },
    async stopped(this: Self<S>) {
      await this.listeners.stop();
    },
  } as unknown as ServiceSchema;
}
