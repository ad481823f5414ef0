/** The worker pool derives exactly the addresses the in-process deriver does, and closes without cutting a worker short. */
import { resolve } from 'node:path';
import { Piscina } from 'piscina';
import { AddressWorkers } from '../../lib/addresses/workers.ts';
import { closePool, runTask } from '../../lib/core/worker-pool.ts';
import { AddressDeriver } from '../../lib/addresses/addresses.ts';

const PHRASE = 'test test test test test test test test test test test junk';

describe('address workers (piscina)', () => {
  const workers = new AddressWorkers(PHRASE);
  afterAll(() => workers.close());

  it('derives the same Ethereum and Solana addresses off the event loop', async () => {
    const local = new AddressDeriver(PHRASE);
    const indexes = [0, 1, 2, 19, 20, 1000];
    const eth = await Promise.all(indexes.map((i) => workers.derive('ethereum', i)));
    const sol = await Promise.all(indexes.map((i) => workers.derive('solana', i)));
    expect(eth[0]).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(eth).toEqual(indexes.map((i) => local.ethereum(i)));
    expect(sol).toEqual(indexes.map((i) => local.solana(i)));
  });

  it('a close runs the tasks queued while its worker still starts, so no worker is terminated loading the native addon', async () => {
    // a forced close refused such a task and then terminated its worker mid-load: libsecp256k1's addon
    // threw where nothing catches it and the process aborted (lib/core/worker-pool.ts)
    for (let i = 0; i < 5; i++) {
      const fresh = new AddressWorkers(PHRASE);
      const queued = fresh.derive('ethereum', i);
      await fresh.close();
      expect(await queued).toBe(new AddressDeriver(PHRASE).ethereum(i));
    }
  });

  it('a close waits for every thread of the pool to have loaded its module, the ones that took no task too', async () => {
    for (let round = 0; round < 3; round++) {
      const pool = new Piscina({
        filename: resolve('workers/derive-address.ts'),
        workerData: { phrase: PHRASE },
        minThreads: 0,
        maxThreads: 3,
      });
      const loaded = new Set<number>();
      pool.on('workerCreate', (w: { id: number }) => loaded.add(w.id));
      const started = new Set<number>();
      // one thread up and idle; four tasks at once start two more threads, and the first thread, done with
      // each task in a millisecond, takes the others before those threads have loaded
      await runTask(pool, { chain: 'ethereum', index: 0 });
      const done = Promise.all([1, 2, 3, 4].map((i) => runTask(pool, { chain: 'ethereum', index: i })));
      for (const t of pool.threads) started.add(t.threadId);
      await done;
      for (const t of pool.threads) started.add(t.threadId);
      await closePool(pool);
      expect(started.size).toBeGreaterThan(1);
      for (const id of started) expect([id, loaded.has(id)]).toEqual([id, true]);
    }
  });
});
