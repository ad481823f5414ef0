/**
 * Property: however many creates race for one Ethereum sender (also several for one id, as two nodes
 * claiming the same payout would), every distinct transaction gets exactly one row, the nonces given out
 * are exactly 0..n-1 (none reused, none skipped), and a create that lost signs again rather than reusing.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { openStore, type Store } from '../../lib/store/index.ts';
import { Broadcaster } from '../../lib/chains/broadcast/outbox.ts';
import { CHAIN_TXS, type ChainTxDoc, type TxDriver } from '../../lib/chains/broadcast/types.ts';
import { tempDir } from '../helpers/node.ts';

const SENDER = '0x00000000000000000000000000000000000000aa';

function fakeDriver(delays: number[], signed: { count: number }): TxDriver {
  let k = 0;
  return {
    chain: 'ethereum',
    network: 'testnet',
    addresses: () => ({ from: SENDER, to: '0x00000000000000000000000000000000000000bb' }),
    chainNonce: async () => 0,
    async sign(_intent, nonce) {
      signed.count++;
      await new Promise((r) => setTimeout(r, delays[k++ % delays.length]));
      return {
        raw: `raw:${nonce}`,
        hash: `hash:${nonce}:${Math.random()}`,
        signed_at: new Date().toISOString(),
        gas_price: '1',
        gas_limit: '21000',
        value: '1',
      };
    },
    resign: async () => {
      throw new Error('not used');
    },
    send: async () => undefined,
    check: async () => ({ state: 'pending' }),
  };
}

describe('outbox nonce allocation', () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    store = await openStore(`sqlite:${join(dir, 's.db')}`);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives every distinct transaction of a sender one row and the nonces 0..n-1', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
        async (ids, delays) => {
          run++;
          const signed = { count: 0 };
          const driver = fakeDriver(delays, signed);
          const nodes = [0, 1].map(
            () =>
              new Broadcaster({
                store,
                driver: () => driver,
                pollIntervalMs: 1000,
                rebroadcastMs: 1000,
                bumpAfterMs: 1000,
                log: { warn: () => undefined },
              }),
          );
          // each run starts the sender's nonce afresh (its rows have their own ids)
          await store.write([{ op: 'upsert', coll: 'chain_nonces', doc: { id: `ethereum:testnet:${SENDER}`, next: 0, updated_at: '' } }]);
          const results = await Promise.all(
            ids.map((i, n) =>
              nodes[n % 2]!.create({
                id: `r${run}:t${i}`,
                chain: 'ethereum',
                network: 'testnet',
                purpose: 'test',
                intent: {
                  chain: 'ethereum',
                  kind: 'native',
                  from: { role: 'gas', chain: 'ethereum', index: 0 },
                  to: '0x00000000000000000000000000000000000000bb',
                  value: '1',
                },
              }),
            ),
          );
          const distinct = new Set(ids);
          const rows = (await store.find<ChainTxDoc>(CHAIN_TXS, {})).filter((d) => d.id.startsWith(`r${run}:`));
          expect(rows).toHaveLength(distinct.size);
          expect(rows.map((r) => r.nonce).sort((a, b) => a! - b!)).toEqual([...Array(distinct.size).keys()]);
          // every caller of one id sees the same row, and its bytes carry its nonce
          for (const [n, res] of results.entries()) {
            const row = rows.find((r) => r.id === `r${run}:t${ids[n]}`)!;
            expect(res.doc.tx_hash).toBe(row.tx_hash);
            expect(row.attempts[0]!.raw).toBe(`raw:${row.nonce}`);
          }
          expect(signed.count).toBeGreaterThanOrEqual(distinct.size);
        },
      ),
      { numRuns: 40 },
    );
  });
});
