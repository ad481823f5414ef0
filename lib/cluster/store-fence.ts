/**
 * A node cut from the store but still on the transporter would keep offering its services: the calls
 * balanced to it and the actor shards it holds answer 503, about half the traffic of the healthy nodes
 * in a two-node cluster. While its store is unreachable the node stops every service but its API, so
 * its peers drop it from their endpoint lists and shard rings and take its work (actors reload from the
 * store); its own API keeps answering, through the peers. When the store is back the services start
 * again. Transitions run one after another, so a flapping link ends in the state of its last report.
 */
import type { ServiceBroker, ServiceSchema } from 'moleculer';

export interface FencedService {
  name: string;
  create(): ServiceSchema;
}

export class StoreFence {
  private chain: Promise<void> = Promise.resolve();
  private fenced = false;
  private readonly broker: ServiceBroker;
  private readonly services: FencedService[];

  constructor(broker: ServiceBroker, services: FencedService[]) {
    this.broker = broker;
    this.services = services;
  }

  /** the store's availability report (PostgresStore's onAvailability) */
  readonly report = (up: boolean): void => {
    this.chain = this.chain.then(() => this.apply(up)).catch((e) => this.broker.logger.error('store fence:', e));
  };

  /** resolves when every report so far has been applied */
  settled(): Promise<void> {
    return this.chain;
  }

  private async apply(up: boolean): Promise<void> {
    if (up === !this.fenced || !this.broker.started) return;
    const names = this.services.map((s) => s.name).join(', ');
    if (!up) {
      this.fenced = true;
      this.broker.logger.warn(`store unreachable: leaving this node's services to the nodes that reach it (${names})`);
      for (const s of this.services) {
        const running = this.broker.getLocalService(s.name);
        if (running) await this.broker.destroyService(running);
      }
    } else {
      this.fenced = false;
      this.broker.logger.info(`store back: offering this node's services again (${names})`);
      for (const s of this.services) if (!this.broker.getLocalService(s.name)) this.broker.createService(s.create());
    }
  }
}
