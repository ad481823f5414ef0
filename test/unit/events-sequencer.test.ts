/**
 * The event sequencer (lib/events/feed.ts) on a real SQLite store: two sequencers racing, delivery
 * writes racing them, ids committed out of order; a reader that follows the stream position sees every
 * event exactly once.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { openStore, type Store } from '../../lib/store/index.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { webhookEventOp } from '../../lib/webhooks/event.ts';
import { readAfter, sequenceAll, lastSeq, type FeedRow } from '../../lib/events/feed.ts';
import { tempDir } from '../helpers/node.ts';
import type { WriteOp } from '../../lib/store/port.ts';

const op = (merchant: string) =>
  webhookEventOp({
    merchant_id: merchant,
    session_id: 'ps_x',
    event_type: 'payment_session.completed',
    status: 'completed',
    amount: 1,
    currency: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    now: new Date(),
  }) as WriteOp & { doc: FeedRow };

describe('event sequencer', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = tempDir('seq-');
    store = await openStore(`sqlite:${join(dir, 's.db')}`);
    await store.ensure(COLLECTIONS);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('racing sequencers, racing delivery writes and out-of-order commits: every event once, in one increasing order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 3 }), { minLength: 5, maxLength: 40 }), async (plan) => {
        const start = await lastSeq(store);
        // ids made up front, committed in a shuffled order: a smaller id may commit after a larger one
        const ops = plan.map(() => op('mer_a'));
        const seen: string[] = [];
        let cursor = start;
        let committing = true;
        const reader = (async () => {
          while (committing || (await readAfter(store, 'mer_a', cursor, 100)).length > 0) {
            for (const row of await readAfter(store, 'mer_a', cursor, 100)) {
              seen.push(row.id);
              expect(row.stream_seq).toBeGreaterThan(cursor);
              cursor = row.stream_seq!;
            }
            await new Promise((r) => setImmediate(r));
          }
        })();
        const order = ops
          .map((o, i) => ({ o, k: plan[i] * 1000 + i }))
          .sort((a, b) => a.k - b.k)
          .map((x) => x.o);
        for (const [i, o] of order.entries()) {
          await store.write([o]);
          // a delivery-like write on the row while sequencers run
          const touch = (async () => {
            const row = await store.get<FeedRow>('webhook_events', o.doc.id);
            await store
              .write([
                { op: 'cas', coll: 'webhook_events', doc: { ...row!, lease_until: new Date().toISOString() }, expected: row!.version! },
              ])
              .catch(() => undefined);
          })();
          if (i % 2 === 0) await Promise.all([sequenceAll(store), sequenceAll(store), touch]);
          else await touch;
        }
        await Promise.all([sequenceAll(store), sequenceAll(store)]);
        committing = false;
        await reader;
        expect([...seen].sort()).toEqual(ops.map((o) => o.doc.id).sort());
        expect(new Set(seen).size).toBe(seen.length);
        expect(await lastSeq(store)).toBe(start + ops.length);
      }),
      { numRuns: 15 },
    );
  });
});
