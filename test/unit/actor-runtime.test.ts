/** The actor runtime: one message at a time, compare-and-set with reload-and-retry, bounded mailbox, idle deactivation. */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { ActorHost } from '../../actors/runtime.ts';
import type { ActorBehavior } from '../../lib/core/actor.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import type { Doc } from '../../lib/store/port.ts';
import { tempDir } from '../helpers/node.ts';

interface Counter extends Doc {
  n: number;
  log: number[];
}
type Msg = { add: number; slow?: boolean };

const counter: ActorBehavior<Counter, Msg, number> = {
  collection: 'counters',
  async handle(state, msg) {
    if (msg.slow) await new Promise((r) => setTimeout(r, 5));
    const next: Counter = state ? { ...state, n: state.n + msg.add, log: [...state.log, msg.add] } : { id: '', n: msg.add, log: [msg.add] };
    return { state: next, reply: next.n };
  },
};

describe('actor runtime', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = tempDir('actors-');
    store = new SqliteStore(join(dir, 'a.db'));
    await store.ensure([{ name: 'counters' }]);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('processes one message at a time per actor, in order', async () => {
    const host = new ActorHost(store, counter);
    const replies = await Promise.all([1, 2, 3, 4, 5].map((add) => host.send('a', { add, slow: true })));
    expect(replies).toEqual([1, 3, 6, 10, 15]);
    expect(await store.get('counters', 'a')).toMatchObject({ n: 15, log: [1, 2, 3, 4, 5] });
    host.stop();
  });

  it('loses no update when two hosts (two nodes) hold the same actor', async () => {
    const a = new ActorHost(store, counter);
    const b = new ActorHost(store, counter);
    await a.send('x', { add: 1 });
    await b.send('x', { add: 1 }); // b now caches version 2
    await a.send('x', { add: 1 }); // a's cache (v1) is stale: CAS fails, reload, retry
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).send('x', { add: 1, slow: true })));
    const doc = await store.get<Counter>('counters', 'x');
    expect(doc!.n).toBe(23);
    expect(doc!.log).toHaveLength(23);
    a.stop();
    b.stop();
  });

  it('decides again after a duplicate key on an effect only in the collections the behaviour names', async () => {
    await store.ensure([{ name: 'shared' }]);
    // each decision creates the shared row unless it exists (as the first ledger account of a wallet)
    const make = (retryDuplicatesIn?: string[]): ActorBehavior<Counter, Msg, number> => ({
      collection: 'counters',
      retryDuplicatesIn,
      async handle(state, msg) {
        const exists = await store.get('shared', 'row');
        // another writer creates it between the read and this actor's write
        if (!exists) await store.write([{ op: 'insert', coll: 'shared', doc: { id: 'row' } }]);
        const next: Counter = state ? { ...state, n: state.n + msg.add } : { id: '', n: msg.add, log: [] };
        return { state: next, effects: exists ? [] : [{ op: 'insert', coll: 'shared', doc: { id: 'row' } }], reply: next.n };
      },
    });
    const strict = new ActorHost(store, make());
    await expect(strict.send('a', { add: 1 })).rejects.toMatchObject({ name: 'DuplicateKeyError' });
    strict.stop();
    await store.write([{ op: 'delete', coll: 'shared', id: 'row' }]);
    const lenient = new ActorHost(store, make(['shared']));
    expect(await lenient.send('b', { add: 2 })).toBe(2);
    expect(await store.get('counters', 'b')).toMatchObject({ n: 2 });
    lenient.stop();
  });

  it('answers 429 when the mailbox is full', async () => {
    const host = new ActorHost(store, counter, { mailboxSize: 3 });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => host.send('m', { add: 1, slow: true })));
    const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected).toHaveLength(3);
    expect(rejected[0].reason.code).toBe(429);
    expect((await store.get<Counter>('counters', 'm'))!.n).toBe(3);
    host.stop();
  });

  it('deactivates idle actors and caps how many stay in memory', async () => {
    const host = new ActorHost(store, counter, { idleMs: 1000, maxActive: 5 });
    for (let i = 0; i < 12; i++) await host.send(`k${i}`, { add: 1 });
    expect(host.size).toBeLessThanOrEqual(5);
    // a deactivated actor comes back from the store with its state
    expect(await host.send('k0', { add: 1 })).toBe(2);
    host.stop();
  });

  it('writes nothing when a message changes nothing, and propagates refusals without writing', async () => {
    const refusing: ActorBehavior<Counter, Msg, number> = {
      collection: 'counters',
      handle(state, msg) {
        if (msg.add < 0) throw new Error('refused');
        return { reply: state?.n ?? 0 };
      },
    };
    const host = new ActorHost(store, refusing);
    expect(await host.send('r', { add: 1 })).toBe(0);
    await expect(host.send('r', { add: -1 })).rejects.toThrow('refused');
    expect(await store.get('counters', 'r')).toBeNull();
    host.stop();
  });
});
