/** The worker pool derives exactly the addresses the in-process deriver does, and closes without cutting a worker short. */
import { AddressWorkers } from '../../lib/addresses/workers.ts';
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
});
