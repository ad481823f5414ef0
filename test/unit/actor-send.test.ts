/**
 * sendToActor (mixins/actor-host.mixin.ts): on a node that holds an actor service's only endpoint the
 * message goes straight to the local host (no broker call); with a second node hosting it the broker routes
 * it by id; the hosting service's afterReply runs on both paths. Brokers on Moleculer's in-process Fake
 * transporter.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { ServiceBroker, type Context } from 'moleculer';
import { actorHostMixin, sendToActor } from '../../mixins/actor-host.mixin.ts';
import type { ActorBehavior } from '../../lib/core/actor.ts';
import type { Runtime } from '../../lib/runtime/index.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import type { Doc } from '../../lib/store/port.ts';
import { tempDir } from '../helpers/node.ts';

interface Counter extends Doc {
  n: number;
}
const counter: ActorBehavior<Counter, { add: number }, number> = {
  collection: 'counters',
  handle(state, msg) {
    const n = (state?.n ?? 0) + msg.add;
    return { state: { ...(state ?? { id: '' }), n }, reply: n };
  },
};

describe('sendToActor', () => {
  let dir: string;
  let store: SqliteStore;
  const brokers: ServiceBroker[] = [];
  /** the replies the services' afterReply saw (a session's webhook nudges ride on it) */
  const after: number[] = [];
  const rt = () =>
    ({
      store,
      now: () => new Date(),
      metrics: { actorActivations: { labels: () => ({ inc: () => undefined }) }, actorSources: new Map() },
    }) as unknown as Runtime;
  const node = async (nodeID: string, transporter?: 'Fake') => {
    const broker = new ServiceBroker({ nodeID, logger: false, transporter, registry: { preferLocal: false } });
    broker.createService({
      name: 'counter-actors',
      mixins: [
        actorHostMixin(rt(), counter, {}, (_b, n: number) => {
          after.push(n);
        }),
      ],
    });
    brokers.push(broker);
    return broker;
  };
  /** a caller whose broker calls are counted */
  const callerOf = (broker: ServiceBroker) => {
    const call = jest.fn((action: string, params: unknown) => broker.call(action, params));
    return { caller: { call, broker } as unknown as Pick<Context, 'call' | 'broker'>, call };
  };

  beforeEach(async () => {
    dir = tempDir('actor-send-');
    store = new SqliteStore(join(dir, 'a.db'));
    await store.ensure([{ name: 'counters' }]);
  });
  afterEach(async () => {
    after.length = 0;
    await Promise.all(brokers.splice(0).map((b) => b.stop()));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one node: the local host decides, no broker call', async () => {
    const broker = await node('solo');
    await broker.start();
    const { caller, call } = callerOf(broker);
    expect(await sendToActor(caller, 'counter-actors', 'c1', { add: 2 })).toBe(2);
    expect(await sendToActor(caller, 'counter-actors', 'c1', { add: 3 })).toBe(5);
    expect(call).not.toHaveBeenCalled();
    expect(after).toEqual([2, 5]);
    expect((await store.get<Counter>('counters', 'c1'))?.n).toBe(5);
  });

  it('two nodes hosting it: the broker routes every message (by id)', async () => {
    const a = await node('a', 'Fake');
    const b = await node('b', 'Fake');
    await Promise.all([a.start(), b.start()]);
    await a.waitForServices(['counter-actors']);
    // both endpoints known to a
    for (
      let i = 0;
      i < 50 &&
      (a.registry as unknown as { getActionEndpoints(n: string): { count(): number } }).getActionEndpoints('counter-actors.send').count() <
        2;
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    const { caller, call } = callerOf(a);
    let n = 0;
    for (let i = 0; i < 6; i++) n = await sendToActor<{ add: number }, number>(caller, 'counter-actors', `c${i % 3}`, { add: 1 });
    expect(n).toBe(2);
    expect(call).toHaveBeenCalledTimes(6);
    expect(after).toEqual([1, 1, 1, 2, 2, 2]);
    expect(call.mock.calls[0]).toEqual(['counter-actors.send', { id: 'c0', msg: { add: 1 } }]);
  });

  it('an afterReply that returns a promise is awaited before the reply goes back (a direct send too)', async () => {
    const broker = new ServiceBroker({ nodeID: 'slow', logger: false, registry: { preferLocal: false } });
    brokers.push(broker);
    const seen: string[] = [];
    broker.createService({
      name: 'counter-actors',
      mixins: [
        actorHostMixin(rt(), counter, {}, async (_b, n: number) => {
          await new Promise((r) => setTimeout(r, 20));
          seen.push(`after ${n}`);
        }),
      ],
    });
    await broker.start();
    const { caller } = callerOf(broker);
    const n = await sendToActor<{ add: number }, number>(caller, 'counter-actors', 'c1', { add: 4 });
    seen.push(`reply ${n}`);
    expect(seen).toEqual(['after 4', 'reply 4']);
  });

  it('an actor service with action hooks is refused (a direct send would skip them)', () => {
    const broker = new ServiceBroker({ nodeID: 'hooked', logger: false });
    brokers.push(broker);
    expect(() =>
      broker.createService({
        name: 'counter-actors',
        mixins: [actorHostMixin(rt(), counter)],
        hooks: { after: { send: (_c: Context, r: number) => r } },
      }),
    ).toThrow(/no action hooks/);
  });

  it('no endpoint: the broker call answers (the service is not available)', async () => {
    const broker = new ServiceBroker({ nodeID: 'empty', logger: false });
    brokers.push(broker);
    await broker.start();
    const { caller, call } = callerOf(broker);
    await expect(sendToActor(caller, 'counter-actors', 'c1', { add: 1 })).rejects.toMatchObject({ name: 'ServiceNotFoundError' });
    expect(call).toHaveBeenCalledTimes(1);
  });
});
