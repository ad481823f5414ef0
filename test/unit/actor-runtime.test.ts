/**
 * The actor runtime: one turn at a time, compare-and-set with reload-and-retry, bounded mailbox, idle
 * deactivation, and turns that decide every queued message in order and commit them in one write.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { ActorHost } from '../../actors/runtime.ts';
import type { ActorBehavior } from '../../lib/core/actor.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import type { Doc, Store, WriteOp } from '../../lib/store/port.ts';
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

  it('past its cap, evicts the oldest idle actors a 64th of the cap at a time', async () => {
    const host = new ActorHost(store, counter, { idleMs: 60_000, maxActive: 128 });
    for (let i = 0; i < 128; i++) await host.send(`c${i}`, { add: 1 });
    expect(host.size).toBe(128);
    await host.send('c128', { add: 1 });
    expect(host.size).toBe(126);
    // the newest stayed; the oldest went, and comes back from the store with its state
    expect(await host.send('c128', { add: 1 })).toBe(2);
    expect(host.size).toBe(126);
    expect(await host.send('c0', { add: 1 })).toBe(2);
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

  describe('batched turns', () => {
    /**
     * A spend against a balance row: each message reads the balance through the view it is given, spends
     * `add` when it is there, and writes the balance and a receipt row as effects (a ledger in small).
     */
    type Spend = { add: number; refuse?: boolean; dup?: boolean };
    const spender = (reads: Store): ActorBehavior<Counter, Spend, string> => ({
      collection: 'counters',
      batches: () => true,
      async handle(state, msg, _now, view) {
        const s = view ?? reads;
        if (msg.refuse) throw new Error('refused');
        const bal = (await s.get<Doc & { left: number }>('balances', 'b'))!;
        if (bal.left < msg.add) return { reply: 'denied' };
        const next: Counter = state
          ? { ...state, n: state.n + msg.add, log: [...state.log, msg.add] }
          : { id: '', n: msg.add, log: [msg.add] };
        const receipt = msg.dup ? 'r-dup' : `r-${next.log.length}`;
        const effects: WriteOp[] = [
          { op: 'cas', coll: 'balances', doc: { ...bal, left: bal.left - msg.add }, expected: bal.version! },
          { op: 'insert', coll: 'receipts', doc: { id: receipt, amount: msg.add } },
        ];
        return { state: next, effects, reply: receipt };
      },
    });
    const counting = (inner: Store, calls: { writes: number }): Store =>
      new Proxy(inner, {
        get(target, prop, recv) {
          if (prop === 'write')
            return (ops: WriteOp[]) => {
              calls.writes++;
              return target.write(ops);
            };
          const v = Reflect.get(target, prop, recv);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });

    beforeEach(async () => {
      await store.ensure([{ name: 'balances' }, { name: 'receipts' }]);
      await store.write([{ op: 'insert', coll: 'balances', doc: { id: 'b', left: 10 } }]);
    });

    it('decides queued messages in order against what the ones before leave, in one write', async () => {
      const calls = { writes: 0 };
      const host = new ActorHost(counting(store, calls), spender(store));
      const replies = await Promise.all([3, 3, 3, 3, 1].map((add) => host.send('w', { add })));
      // sent in one tick, they share the first turn
      expect(replies).toEqual(['r-1', 'r-2', 'r-3', 'denied', 'r-4']);
      expect(calls.writes).toBe(1);
      expect(await store.get('balances', 'b')).toMatchObject({ left: 0 });
      expect(await store.get<Counter>('counters', 'w')).toMatchObject({ n: 10, log: [3, 3, 3, 1] });
      expect(await store.find('receipts', {})).toHaveLength(4);
      host.stop();
    });

    it("answers a refused message with its own error and commits the others' decisions", async () => {
      const host = new ActorHost(store, spender(store));
      const results = await Promise.allSettled(
        [{ add: 1 }, { add: 2 }, { add: 1, refuse: true }, { add: 4 }].map((m) => host.send('w', m)),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(await store.get('balances', 'b')).toMatchObject({ left: 3 });
      host.stop();
    });

    it('decides a message alone when its writes cannot follow the batch, answering as it would have alone', async () => {
      const calls = { writes: 0 };
      const host = new ActorHost(counting(store, calls), spender(store));
      // the second and third insert the same receipt: the third is decided after the batch, alone
      const results = await Promise.allSettled(
        [{ add: 1 }, { add: 1, dup: true }, { add: 1, dup: true }, { add: 1 }].map((m) => host.send('w', m)),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ name: 'DuplicateKeyError' });
      expect(await store.get('balances', 'b')).toMatchObject({ left: 7 });
      expect(await store.get<Counter>('counters', 'w')).toMatchObject({ n: 3 });
      host.stop();
    });

    it('decides every message alone when the batch write is refused, so that only the guilty one fails', async () => {
      const host = new ActorHost(store, spender(store));
      // a receipt already stored: the batch's write fails on its insert (not a lost race)
      await store.write([{ op: 'insert', coll: 'receipts', doc: { id: 'r-dup', amount: 0 } }]);
      const results = await Promise.allSettled([{ add: 1 }, { add: 2 }, { add: 1, dup: true }, { add: 4 }].map((m) => host.send('w', m)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(await store.get('balances', 'b')).toMatchObject({ left: 3 });
      expect(await store.get<Counter>('counters', 'w')).toMatchObject({ n: 7, log: [1, 2, 4] });
      host.stop();
    });

    it('never spends past the balance with two hosts (two nodes) batching on one actor', async () => {
      const a = new ActorHost(store, spender(store));
      const b = new ActorHost(store, spender(store));
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).send('w', { add: 1 })));
      expect(replies.filter((r) => r !== 'denied')).toHaveLength(10);
      expect(await store.get('balances', 'b')).toMatchObject({ left: 0 });
      expect(await store.find('receipts', {})).toHaveLength(10);
      a.stop();
      b.stop();
    });
  });

  it('hands a behaviour that keeps its state the cached state itself, frozen: a change by mistake fails that message only', async () => {
    const seen: Counter[] = [];
    const keeper: ActorBehavior<Counter, Msg & { mutate?: boolean }, number> = {
      collection: 'counters',
      keepsState: true,
      batches: () => true,
      async handle(state, msg) {
        if (state) seen.push(state);
        if (msg.mutate && state) state.log.push(99); // what keepsState promises never to do
        const next: Counter = state
          ? { ...state, n: state.n + msg.add, log: [...state.log, msg.add] }
          : { id: '', n: msg.add, log: [msg.add] };
        return { state: next, reply: next.n };
      },
    };
    const host = new ActorHost(store, keeper);
    await host.send('k', { add: 1 });
    // one turn: the first message is handed the cached state, the others the state the one before them left
    const results = await Promise.allSettled([{ add: 5, mutate: true }, { add: 2 }, { add: 3 }].map((m) => host.send('k', m)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0].log)).toBe(true);
    // the cached state, never a copy: the refused message and the next one were handed the same object
    expect(seen[1]).toBe(seen[0]);
    expect(await host.send('k', { add: 10 })).toBe(16);
    expect(await store.get<Counter>('counters', 'k')).toMatchObject({ n: 16, log: [1, 2, 3, 10] });
    host.stop();
  });
});
