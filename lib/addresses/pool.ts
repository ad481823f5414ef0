/**
 * Deposit addresses derived ahead of need. Per chain, the pool reserves a block of indexes in the store
 * (one compare-and-set on the chain's sequence: no other node or later start can get them), derives the
 * whole block in one worker task, and hands the pairs out in index order. It refills in the background
 * when it runs low, so a session creation normally takes an address without waiting for a derivation.
 *
 * An index is never handed out twice: it is reserved in the store before it is derived, and the pool
 * forgets unused ones when the node stops (gaps in the sequence, harmless: 2^31 indexes per chain).
 *
 * The first block of each chain (`warm`, at start-up) may be derived on the calling thread, one address
 * per turn of the event loop (~0.05 ms Ethereum, ~0.2 ms Solana): an idle node then never boots a worker
 * thread (~50 MB) for addresses nobody has asked for yet; refills under load still go to the workers.
 */
import type { AddressChain, AddressIndexAllocator } from './addresses.ts';
import type { AddressWorkers } from './workers.ts';

export interface PooledAddress {
  index: number;
  address: string;
}

export interface AddressPoolOptions {
  /** indexes reserved and derived together */
  blockSize?: number;
  /** refill when fewer than this many are ready */
  lowWater?: number;
  /** derives one address on this thread: `warm` uses it for the first block instead of the workers */
  deriveInThread?: (chain: AddressChain, index: number) => string;
}

type DeriveBlock = (chain: AddressChain, start: number, count: number) => Promise<string[]>;

interface ChainPool {
  ready: PooledAddress[];
  refill: Promise<void> | null;
  failure: unknown;
}

export class AddressPool {
  private chains = new Map<AddressChain, ChainPool>();
  private allocator: AddressIndexAllocator;
  private workers: Pick<AddressWorkers, 'deriveBlock'>;
  private blockSize: number;
  private lowWater: number;
  private warmDerive: DeriveBlock | null;
  private stopped = false;

  constructor(allocator: AddressIndexAllocator, workers: Pick<AddressWorkers, 'deriveBlock'>, opts: AddressPoolOptions = {}) {
    this.allocator = allocator;
    this.workers = workers;
    this.blockSize = opts.blockSize ?? 128;
    this.lowWater = opts.lowWater ?? Math.floor(this.blockSize / 2);
    const one = opts.deriveInThread;
    this.warmDerive = one
      ? async (chain, start, count) => {
          const out: string[] = [];
          for (let i = 0; i < count && !this.stopped; i++) {
            out.push(one(chain, start + i));
            // one address per turn: requests and broker heartbeats interleave
            await new Promise<void>((r) => setImmediate(r));
          }
          if (out.length < count) throw new Error('the address pool is stopped');
          return out;
        }
      : null;
  }

  private pool(chain: AddressChain): ChainPool {
    let p = this.chains.get(chain);
    if (!p) this.chains.set(chain, (p = { ready: [], refill: null, failure: null }));
    return p;
  }

  /** Starts filling the chain's pool (at start-up, so that the first sessions do not wait). */
  warm(chain: AddressChain): Promise<void> {
    return this.fill(chain, this.pool(chain), this.warmDerive ?? undefined);
  }

  private fill(c: AddressChain, p: ChainPool, derive: DeriveBlock = (...a) => this.workers.deriveBlock(...a)): Promise<void> {
    if (this.stopped) return Promise.resolve();
    p.refill ??= (async () => {
      try {
        const { next, end } = await this.allocator.reserve(c, this.blockSize);
        const addresses = await derive(c, next, end - next);
        addresses.forEach((address, i) => p.ready.push({ index: next + i, address }));
        p.failure = null;
      } catch (e) {
        p.failure = e;
      } finally {
        p.refill = null;
      }
    })();
    return p.refill;
  }

  /** The next fresh (index, address) of the chain. */
  async take(chain: AddressChain): Promise<PooledAddress> {
    const p = this.pool(chain);
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new Error('the address pool is stopped');
      const got = p.ready.shift();
      if (p.ready.length < this.lowWater && !this.stopped) void this.fill(chain, p);
      if (got) return got;
      await this.fill(chain, p);
      // a failing reservation or derivation reaches the callers waiting for it, not later ones
      if (p.ready.length === 0 && p.failure && attempt >= 2) throw p.failure;
    }
  }

  /** Stops refilling; resolves when no derivation of this pool is in flight (then the workers may close). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.chains.values()].map((p) => p.refill));
  }
}
