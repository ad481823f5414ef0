/**
 * The address path: libsecp256k1 derivation gives exactly today's addresses (ethers' HDNodeWallet), worker
 * blocks equal the in-process deriver, and the pre-derived pool never hands out an index twice, across
 * pools sharing a store and across restarts.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { AddressDeriver, AddressIndexAllocator, type AddressChain } from '../../lib/addresses/addresses.ts';
import { AddressWorkers } from '../../lib/addresses/workers.ts';
import { AddressPool } from '../../lib/addresses/pool.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { SESSIONS_COLLECTIONS } from '../../lib/store/schema/sessions.ts';
import { tempDir } from '../helpers/node.ts';

const PHRASE = 'test test test test test test test test test test test junk';

describe('Ethereum derivation through libsecp256k1', () => {
  it('equals ethers HDNodeWallet for random mnemonics and indexes (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (entropy, index) => {
        const phrase = Mnemonic.fromEntropy(entropy).phrase;
        expect(new AddressDeriver(phrase).ethereum(index)).toBe(
          HDNodeWallet.fromPhrase(phrase, undefined, `m/44'/60'/0'/0/${index}`).address,
        );
      }),
      { numRuns: 25 },
    );
  });
});

describe('address pool', () => {
  let dir: string;
  let workers: AddressWorkers;
  beforeAll(() => {
    dir = tempDir('pool-');
    workers = new AddressWorkers(PHRASE);
  });
  afterAll(async () => {
    await workers.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a worker block equals the in-process deriver, index by index', async () => {
    const local = new AddressDeriver(PHRASE);
    for (const chain of ['ethereum', 'solana'] as AddressChain[]) {
      const block = await workers.deriveBlock(chain, 17, 9);
      expect(block).toEqual(Array.from({ length: 9 }, (_, i) => local.address(chain, 17 + i)));
    }
  });

  it('never hands out an index twice across pools sharing a store and across restarts', async () => {
    const file = join(dir, `db-${randomBytes(4).toString('hex')}.sqlite`);
    const local = new AddressDeriver(PHRASE);
    const taken: Array<{ chain: AddressChain; index: number; address: string }> = [];
    for (let restart = 0; restart < 3; restart++) {
      const store = new SqliteStore(file);
      await store.ensure(SESSIONS_COLLECTIONS);
      // two "nodes", small blocks so that they refill many times while racing
      const a = new AddressPool(new AddressIndexAllocator(store), workers, { blockSize: 7, lowWater: 3 });
      const b = new AddressPool(new AddressIndexAllocator(store), workers, { blockSize: 5, lowWater: 2 });
      await a.warm('ethereum');
      const got = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const chain: AddressChain = i % 3 === 0 ? 'solana' : 'ethereum';
          return { chain, ...(await (i % 2 ? a : b).take(chain)) };
        }),
      );
      taken.push(...got);
      await Promise.all([a.stop(), b.stop()]);
      await store.close();
    }
    for (const chain of ['ethereum', 'solana'] as AddressChain[]) {
      const mine = taken.filter((t) => t.chain === chain);
      expect(new Set(mine.map((t) => t.index)).size).toBe(mine.length);
      expect(new Set(mine.map((t) => t.address)).size).toBe(mine.length);
      for (const t of mine) expect(t.address).toBe(local.address(chain, t.index));
    }
  });

  it('warms on the calling thread, refills on the workers: the same addresses, no index twice', async () => {
    const store = new SqliteStore(join(dir, `db-${randomBytes(4).toString('hex')}.sqlite`));
    await store.ensure(SESSIONS_COLLECTIONS);
    const local = new AddressDeriver(PHRASE);
    const inThread: number[] = [];
    const blocks: number[] = [];
    const counting = {
      deriveBlock: (c: AddressChain, start: number, count: number) => (blocks.push(count), workers.deriveBlock(c, start, count)),
    };
    const pool = new AddressPool(new AddressIndexAllocator(store), counting, {
      blockSize: 6,
      lowWater: 2,
      deriveInThread: (chain, index) => (inThread.push(index), local.address(chain, index)),
    });
    try {
      await Promise.all([pool.warm('ethereum'), pool.warm('solana')]);
      expect(inThread).toHaveLength(12);
      expect(blocks).toEqual([]);
      const got = [];
      for (let i = 0; i < 20; i++) got.push({ chain: 'solana' as const, ...(await pool.take('solana')) });
      expect(blocks.length).toBeGreaterThan(0);
      expect(inThread).toHaveLength(12);
      expect(new Set(got.map((g) => g.index)).size).toBe(got.length);
      for (const g of got) expect(g.address).toBe(local.address('solana', g.index));
    } finally {
      await pool.stop();
      await store.close();
    }
  });

  it('a failing reservation reaches the caller instead of hanging', async () => {
    const broken = {
      reserve: async () => {
        throw new Error('store down');
      },
    } as unknown as AddressIndexAllocator;
    const pool = new AddressPool(broken, workers, { blockSize: 4 });
    await expect(pool.take('ethereum')).rejects.toThrow('store down');
  });
});
