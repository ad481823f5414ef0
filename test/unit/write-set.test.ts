/**
 * The write set of a batched actor turn (lib/store/write-set.ts): its view shows the documents as the
 * store will hold them after the write, and its folded ops leave the store exactly as the same ops
 * written one at a time would (property test against two real SQLite stores).
 */
import fc from 'fast-check';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { WriteSet } from '../../lib/store/write-set.ts';
import type { Doc, Store, WriteOp } from '../../lib/store/port.ts';

const IDS = ['a', 'b', 'c'];
type Step = { id: number; kind: 'insert' | 'cas' | 'stale' | 'upsert' | 'delete' | 'add'; value: number };
const step = fc.record({
  id: fc.integer({ min: 0, max: IDS.length - 1 }),
  kind: fc.constantFrom<Step['kind']>('insert', 'cas', 'cas', 'stale', 'upsert', 'delete', 'add', 'add'),
  value: fc.integer({ min: 0, max: 1000 }),
});

async function open(): Promise<Store> {
  const s = new SqliteStore(':memory:');
  await s.ensure([{ name: 'docs' }]);
  return s;
}
const contents = async (s: Store) =>
  (await s.find<Doc & { v: number; n?: string }>('docs', {}))
    .map(({ id, v, n }) => ({ id, v, n }))
    .sort((x, y) => x.id.localeCompare(y.id));

it('folded writes leave the store as the same writes one at a time, and the view sees them first', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 0, max: IDS.length - 1 }), { maxLength: 3 }),
      fc.array(step, { maxLength: 25 }),
      async (seed, steps) => {
        const batched = await open();
        const single = await open();
        for (const i of new Set(seed)) {
          const op: WriteOp = { op: 'insert', coll: 'docs', doc: { id: IDS[i], v: -1 } };
          await batched.write([{ ...op, doc: { ...op.doc } }]);
          await single.write([{ ...op, doc: { ...op.doc } }]);
        }
        const set = new WriteSet(batched);
        const touched = new Set<string>();
        for (const s of steps) {
          const id = IDS[s.id];
          const seen = await set.view.get<Doc & { v: number }>('docs', id);
          // the first write of a document is checked by the store when the batch is written (a refused one
          // fails the whole write, and the actor runtime then decides each message alone): not folded here
          const invalid = (s.kind === 'insert' && !!seen) || ((s.kind === 'cas' || s.kind === 'stale') && (!seen || s.kind === 'stale'));
          if (invalid && !touched.has(id)) continue;
          const op: WriteOp =
            s.kind === 'insert'
              ? { op: 'insert', coll: 'docs', doc: { id, v: s.value } }
              : s.kind === 'upsert'
                ? { op: 'upsert', coll: 'docs', doc: { id, v: s.value } }
                : s.kind === 'delete'
                  ? { op: 'delete', coll: 'docs', id }
                  : s.kind === 'add'
                    ? { op: 'add', coll: 'docs', doc: { id, v: -2 }, add: { n: String(s.value) }, set: ['v'] }
                    : { op: 'cas', coll: 'docs', doc: { id, v: s.value }, expected: (seen?.version ?? 0) + (s.kind === 'stale' ? 7 : 0) };
          let added = true;
          try {
            set.add([op]);
          } catch {
            added = false;
          }
          // an op the store would refuse after the pending ones is refused by the set
          if (invalid) expect(added).toBe(false);
          if (!added) continue;
          touched.add(id);
          // the set counts versions its own way (a folded cas moves the version once): the one-at-a-time
          // store is given its own current version
          const mine = (await single.get('docs', id))?.version ?? 0;
          await single.write([
            op.op === 'delete' ? op : op.op === 'cas' ? { ...op, doc: { ...op.doc }, expected: mine } : { ...op, doc: { ...op.doc } },
          ]);
          // the view shows the document as the one-at-a-time store holds it now
          const now = await single.get<Doc & { v: number }>('docs', id);
          expect((await set.view.get<Doc & { v: number }>('docs', id))?.v).toBe(now?.v);
        }
        await batched.write(set.ops());
        expect(await contents(batched)).toEqual(await contents(single));
        expect(set.ops().filter((o) => o.op !== 'delete').length).toBeLessThanOrEqual(IDS.length);
        await batched.close();
        await single.close();
      },
    ),
    { numRuns: 150 },
  );
});

it('refuses a second insert of a document already written in the batch, and changes nothing then', async () => {
  const store = await open();
  const set = new WriteSet(store);
  set.add([
    { op: 'insert', coll: 'docs', doc: { id: 'a', v: 1 } },
    { op: 'insert', coll: 'docs', doc: { id: 'b', v: 1 } },
  ]);
  expect(() =>
    set.add([
      { op: 'insert', coll: 'docs', doc: { id: 'c', v: 1 } },
      { op: 'insert', coll: 'docs', doc: { id: 'a', v: 2 } },
    ]),
  ).toThrow(/duplicate key/);
  expect(await set.view.get('docs', 'c')).toBeNull();
  expect(set.ops()).toHaveLength(2);
  await expect(set.view.write([])).rejects.toThrow(/must not write/);
  await store.close();
});

it('reads a committed document once per set: a later commit by another writer is not seen, and a write on the stale copy is refused', async () => {
  const store = await open();
  await store.write([{ op: 'insert', coll: 'docs', doc: { id: 'a', v: 1 } }]);
  const set = new WriteSet(store);
  const first = await set.view.get<Doc & { v: number }>('docs', 'a');
  // what the reader changes is its own copy
  first!.v = 99;
  await store.write([{ op: 'cas', coll: 'docs', doc: { id: 'a', v: 2 }, expected: first!.version! }]);
  const again = await set.view.get<Doc & { v: number }>('docs', 'a');
  expect(again).toMatchObject({ v: 1, version: 1 });
  set.add([{ op: 'cas', coll: 'docs', doc: { id: 'a', v: 3 }, expected: again!.version! }]);
  await expect(store.write(set.ops())).rejects.toThrow(/version|conflict/i);
  expect(await store.get('docs', 'a')).toMatchObject({ v: 2 });
  await store.close();
});
