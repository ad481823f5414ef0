/**
 * The store port's contract, run against every adapter: SQLite and PostgreSQL always (a fresh database
 * per test, on the server test/helpers/postgres.ts finds or starts), MongoDB when MONGO_URL is set
 * (MONGO_URL=mongodb://host:27017/test_db?replicaSet=rs0 npx jest store-contract).
 */
import { storeAdapters } from '../helpers/store-adapters.ts';
import { DuplicateKeyError, VersionConflictError, type Store, type WriteOp } from '../../lib/store/port.ts';

const adapters = storeAdapters('contract');

const SPECS = [
  { name: 'things', indexes: [{ fields: ['owner', 'created_at'] }, { fields: ['slug'], unique: true }] },
  { name: 'leases', expiresField: 'expires_at' },
  { name: 'jobs', indexes: [{ fields: ['status', 'due_at'] }] },
  // the same documents with and without a text index must give the same answers
  { name: 'texted', indexes: [{ fields: ['owner', 'id'] }], expiresField: 'expires_at', textIndex: ['name', 'description'] },
  { name: 'plain', indexes: [{ fields: ['owner', 'id'] }], expiresField: 'expires_at' },
];

describe.each(adapters)('store contract: $name', (adapter) => {
  let store: Store;
  beforeEach(async () => {
    store = await adapter.open();
    await store.ensure(SPECS);
  });
  afterEach(async () => {
    await store.close();
    await adapter.cleanup();
  });

  it('inserts, gets and refuses a duplicate id or unique field', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 't1', owner: 'a', slug: 'x', n: 1 } }]);
    expect(await store.get('things', 't1')).toMatchObject({ id: 't1', owner: 'a', version: 1, n: 1 });
    expect(await store.get('things', 'nope')).toBeNull();
    await expect(store.write([{ op: 'insert', coll: 'things', doc: { id: 't1', owner: 'b' } }])).rejects.toBeInstanceOf(DuplicateKeyError);
    await expect(store.write([{ op: 'insert', coll: 'things', doc: { id: 't2', slug: 'x' } }])).rejects.toBeInstanceOf(DuplicateKeyError);
    // documents without the unique field do not collide
    await store.write([
      { op: 'insert', coll: 'things', doc: { id: 't3' } },
      { op: 'insert', coll: 'things', doc: { id: 't4' } },
    ]);
    expect(await store.count('things', {})).toBe(3);
  });

  it('compare-and-set succeeds once per version and refuses a stale one', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'c', n: 0 } }]);
    const v1 = (await store.get('things', 'c'))!;
    await store.write([{ op: 'cas', coll: 'things', doc: { ...v1, n: 1 }, expected: v1.version! }]);
    await expect(store.write([{ op: 'cas', coll: 'things', doc: { ...v1, n: 2 }, expected: v1.version! }])).rejects.toBeInstanceOf(
      VersionConflictError,
    );
    expect(await store.get('things', 'c')).toMatchObject({ n: 1, version: 2 });
  });

  it('commits all operations of a write or none', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'a1', slug: 'taken' } }]);
    await expect(
      store.write([
        { op: 'insert', coll: 'things', doc: { id: 'a2' } },
        { op: 'insert', coll: 'things', doc: { id: 'a3', slug: 'taken' } },
      ]),
    ).rejects.toBeInstanceOf(DuplicateKeyError);
    expect(await store.get('things', 'a2')).toBeNull();
    const a1 = (await store.get('things', 'a1'))!;
    await expect(
      store.write([
        { op: 'upsert', coll: 'things', doc: { id: 'a4' } },
        { op: 'cas', coll: 'things', doc: { ...a1 }, expected: 99 },
      ]),
    ).rejects.toBeInstanceOf(VersionConflictError);
    expect(await store.get('things', 'a4')).toBeNull();
  });

  it('adds amounts to a document: concurrent adds never conflict, each is counted once, all or nothing', async () => {
    const acc = { id: 'acc', owner: 'a', credits: '0', note: 'new' };
    const big = (10n ** 30n).toString();
    // absent: the document is created with the amounts added to it
    await store.write([{ op: 'add', coll: 'things', doc: { ...acc }, add: { credits: big }, set: ['note'] }]);
    expect(await store.get('things', 'acc')).toMatchObject({ credits: big, note: 'new', version: 1 });
    // present: concurrent writes of an add each (with a row of their own), none refused
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.write([
          { op: 'add', coll: 'things', doc: { ...acc, note: `n${i}` }, add: { credits: String(i + 1) }, set: ['note'] },
          { op: 'insert', coll: 'things', doc: { id: `r${i}` } },
        ]),
      ),
    );
    const after = (await store.get<{ id: string; credits: string; note: string; version?: number }>('things', 'acc'))!;
    expect(after.credits).toBe((10n ** 30n + 465n).toString());
    expect(after.note).toMatch(/^n\d+$/);
    expect(after.version).toBe(31);
    // a write that fails adds nothing
    await expect(
      store.write([
        { op: 'add', coll: 'things', doc: { ...acc }, add: { credits: '5' } },
        { op: 'insert', coll: 'things', doc: { id: 'r0' } },
      ]),
    ).rejects.toBeInstanceOf(DuplicateKeyError);
    expect(await store.get('things', 'acc')).toMatchObject({ credits: after.credits, version: 31 });
    // a field the stored document lacks starts at 0, an amount may be negative, and the op's document takes the new version
    const less: WriteOp = { op: 'add', coll: 'things', doc: { ...acc }, add: { credits: '-465', debits: '7' } };
    await store.write([less]);
    expect((less as { doc: { version?: number } }).doc.version).toBe(32);
    expect(await store.get('things', 'acc')).toMatchObject({ credits: big, debits: '7', note: after.note, version: 32 });
    // a compare-and-set from before the adds is refused
    await expect(store.write([{ op: 'cas', coll: 'things', doc: { ...acc }, expected: 1 }])).rejects.toBeInstanceOf(VersionConflictError);
  });

  it('adds to a document that is absent: it is created once and every amount counts', async () => {
    // two adds of one absent document in one write: the first inserts it, the second adds to that row
    await store.write([
      { op: 'add', coll: 'things', doc: { id: 'fresh-two', credits: '0' }, add: { credits: '3' } },
      { op: 'add', coll: 'things', doc: { id: 'fresh-two', credits: '0' }, add: { credits: '4', debits: '1' } },
    ]);
    expect(await store.get('things', 'fresh-two')).toMatchObject({ credits: '7', debits: '1', version: 2 });
    // concurrent first adds: the first inserts the row and the others add to it (SQLite: one group commit, a
    // savepoint each; PostgreSQL: separate transactions, the insert decides); MongoDB reads and replaces on the
    // version, so a concurrent add there is a conflict the caller decides again
    if (adapter.name === 'mongodb') return;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.write([
          {
            op: 'add',
            coll: 'things',
            doc: { id: 'fresh-acc', credits: '0', note: `n${i}` },
            add: { credits: String(i + 1) },
            set: ['note'],
          },
        ]),
      ),
    );
    const got = (await store.get<{ id: string; credits: string; version?: number }>('things', 'fresh-acc'))!;
    expect(got.credits).toBe('55');
    expect(got.version).toBe(10);
  });

  it('upserts and deletes', async () => {
    await store.write([{ op: 'upsert', coll: 'things', doc: { id: 'u', n: 1 } }]);
    await store.write([{ op: 'upsert', coll: 'things', doc: { id: 'u', n: 2 } }]);
    expect(await store.get('things', 'u')).toMatchObject({ n: 2, version: 2 });
    await store.write([{ op: 'delete', coll: 'things', id: 'u' }]);
    expect(await store.get('things', 'u')).toBeNull();
  });

  it('finds with filters, sort, limit, cursor paging and case-insensitive text search', async () => {
    const docs = Array.from({ length: 25 }, (_, i) => ({
      id: `p${String(i).padStart(2, '0')}`,
      owner: i % 2 ? 'odd' : 'even',
      created_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`,
      name: i === 7 ? 'Blue WIDGET 100%' : `item ${i}`,
      flag: i % 5 === 0,
      nested: { level: i },
    }));
    await store.write(docs.map((doc) => ({ op: 'insert' as const, coll: 'things', doc })));
    expect(await store.count('things', { owner: 'odd' })).toBe(12);
    expect((await store.find('things', { flag: true })).map((d) => d.id)).toEqual(['p00', 'p05', 'p10', 'p15', 'p20']);
    expect((await store.find('things', { 'nested.level': { $gte: 22 } })).map((d) => d.id)).toEqual(['p22', 'p23', 'p24']);
    expect((await store.find('things', { id: { $in: ['p03', 'p01', 'zz'] } })).map((d) => d.id)).toEqual(['p01', 'p03']);
    expect((await store.find('things', { owner: 'even' }, { sort: 'created_at', desc: true, limit: 2 })).map((d) => d.id)).toEqual([
      'p24',
      'p22',
    ]);
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await store.find('things', cursor ? { id: { $gt: cursor } } : {}, { limit: 10 });
      seen.push(...page.map((d) => d.id));
      if (page.length < 10) break;
      cursor = page[page.length - 1].id;
    }
    expect(seen).toEqual(docs.map((d) => d.id));
    expect((await store.find('things', {}, { text: { q: 'widget 100%', fields: ['name', 'description'] } })).map((d) => d.id)).toEqual([
      'p07',
    ]);
    expect(await store.find('things', {}, { text: { q: '_', fields: ['name'] } })).toEqual([]);
    expect(await store.find('things', { missing: null }, { limit: 1 })).toHaveLength(1);
    expect(await store.count('things', { owner: { $ne: 'odd' } })).toBe(13);
  });

  it('finds with lookups: related documents by id or field, chained, filtered, live only, each once in id order', async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    const past = new Date(Date.now() - 3600_000).toISOString();
    const ins = (coll: string, docs: Array<Record<string, unknown>>) =>
      store.write(docs.map((doc) => ({ op: 'insert' as const, coll, doc: doc as { id: string } })));
    await ins('texted', [
      { id: 'x1', name: 'pear one', owner: 'o1', tag: 'a' },
      { id: 'x2', name: 'apple', owner: 'o2', tag: 'b' },
      { id: 'x3', name: 'Pear two', owner: 'o2', tag: 7 },
      { id: 'x4', name: 'pear three', owner: 'o3', tag: 'a' },
      { id: 'x5', name: 'pear four' },
    ]);
    await ins('things', [
      { id: 'o1', status: 'open' },
      { id: 'o2', status: 'open' },
      { id: 'o3', status: 'closed' },
    ]);
    await ins('jobs', [
      { id: 'j1', thing: 'o2', status: 'due' },
      { id: 'j0', thing: 'o2', status: 'due' },
      { id: 'j2', thing: 'o2', status: 'done' },
      { id: 'j3', thing: 'o1', status: 'due' },
    ]);
    await ins('leases', [
      { id: 'l1', job: 'j1', expires_at: future },
      { id: 'l2', job: 'j0', expires_at: past },
      { id: 'l3', job: 'j3', expires_at: future },
    ]);
    await ins('plain', [
      { id: 'p4', tag: 'b' },
      { id: 'p2', tag: 7 },
      { id: 'p1', tag: 'a' },
      { id: 'p3', tag: 'a', expires_at: past },
    ]);
    const lookups = [
      { coll: 'things', field: 'id', to: 'owner', filter: { status: 'open' } },
      { coll: 'jobs', field: 'thing', to: 'id', from: 0, filter: { status: 'due' } },
      { coll: 'leases', field: 'job', to: 'id', from: 1 },
      { coll: 'plain', field: 'tag', to: 'tag' },
      { coll: 'things', field: 'id', to: 'thing', from: 1 },
    ];
    const ids = (docs: Array<{ id: string }>) => docs.map((d) => d.id);
    const found = await store.findWith('texted', {}, { desc: true, limit: 3, text: { q: 'PEAR', fields: ['name'] } }, lookups);
    expect(ids(found.docs)).toEqual(['x5', 'x4', 'x3']);
    expect(found.related.map(ids)).toEqual([['o2'], ['j0', 'j1'], ['l1'], ['p1', 'p2'], ['o2']]);
    expect(found.related[1][0]).toEqual({ id: 'j0', thing: 'o2', status: 'due', version: 1 });
    // without a text search, and with nothing found
    expect((await store.findWith('texted', { id: 'x1' }, {}, lookups)).related.map(ids)).toEqual([['o1'], ['j3'], ['l3'], ['p1'], ['o1']]);
    expect(await store.findWith('texted', { id: 'none' }, {}, lookups)).toEqual({ docs: [], related: [[], [], [], [], []] });
  });

  it('treats a field holding null like a missing one, in equality, $ne and $exists', async () => {
    await store.write(
      [{ id: 'n1', tag: null }, { id: 'n2' }, { id: 'n3', tag: 'x' }].map((doc) => ({ op: 'insert' as const, coll: 'things', doc })),
    );
    const ids = async (filter: Record<string, unknown>) => (await store.find('things', filter as never)).map((d) => d.id);
    expect(await ids({ tag: null })).toEqual(['n1', 'n2']);
    expect(await ids({ tag: { $exists: false } })).toEqual(['n1', 'n2']);
    expect(await ids({ tag: { $ne: null } })).toEqual(['n3']);
    expect(await ids({ tag: { $exists: true } })).toEqual(['n3']);
  });

  it('answers text searches the same with a text index as without, through every kind of write', async () => {
    const words = ['alpha', 'Bravo', 'charlie', 'DELTA', 'echo', 'foxtrot'];
    const docs = Array.from({ length: 2600 }, (_, i) => ({
      id: `d${String(i).padStart(5, '0')}`,
      owner: i % 3 === 0 ? 'a' : 'b',
      name: `${words[i % 6]} item ${i}${i === 5 || i === 11 ? ' RareZebra' : ''}`,
      description: i % 7 === 0 ? `about ${words[(i + 1) % 6]} and 100%_off` : null,
    }));
    const both = (op: 'insert' | 'upsert', doc: Record<string, unknown> & { id: string }) =>
      [
        { op, coll: 'texted', doc: { ...doc } },
        { op, coll: 'plain', doc: { ...doc } },
      ] as never[];
    for (let i = 0; i < docs.length; i += 500) await store.write(docs.slice(i, i + 500).flatMap((d) => both('insert', d)));
    const same = async (filter: Record<string, unknown>, q: string, fields: string[], limit?: number, desc = true) => {
      const opts = { desc, limit, text: { q, fields } };
      const a = (await store.find('texted', filter as never, opts)).map((d) => d.id);
      const b = (await store.find('plain', filter as never, opts)).map((d) => d.id);
      expect([q, a]).toEqual([q, b]);
      return a;
    };
    const check = async () => {
      // a line break could span two fields in PostgreSQL's text_body: it must not
      for (const q of ['rarezebra', 'ALPHA', 'item 25', 'o', 'zz', '100%_', 'about bravo', 'nothing here', 'ha item 1', 'item 0\nabout']) {
        await same({}, q, ['name', 'description'], 21);
        await same({}, q, ['name'], 5, false);
        await same({ owner: 'b' }, q, ['name', 'description'], 21);
        await same({ id: { $lt: 'd01000' } }, q, ['description'], 50);
        await same({}, q, ['name', 'description']);
      }
    };
    expect(await same({}, 'RAREZEBRA', ['name'], 10)).toEqual(['d00011', 'd00005']);
    await check();
    const d5 = (await store.get('texted', 'd00005'))!;
    const p5 = (await store.get('plain', 'd00005'))!;
    await store.write([
      { op: 'cas', coll: 'texted', doc: { ...d5, name: 'renamed' }, expected: d5.version! },
      { op: 'cas', coll: 'plain', doc: { ...p5, name: 'renamed' }, expected: p5.version! },
      ...both('upsert', { id: 'd00020', owner: 'a', name: 'now a RareZebra too', description: null }),
      ...both('upsert', { id: 'new1', owner: 'b', name: 'brand new rarezebra', description: 'x' }),
      { op: 'delete', coll: 'texted', id: 'd00011' },
      { op: 'delete', coll: 'plain', id: 'd00011' },
      ...both('insert', { id: 'gone', owner: 'a', name: 'expired rarezebra', expires_at: new Date(Date.now() - 1000).toISOString() }),
    ]);
    expect(await same({}, 'rarezebra', ['name'], 10)).toEqual(['new1', 'd00020']);
    await check();
    await store.purgeExpired(new Date());
    await store.write(both('insert', { id: 'gone', owner: 'a', name: 'back again rarezebra' }));
    expect(await same({}, 'rarezebra', ['name'], 10)).toEqual(['new1', 'gone', 'd00020']);
  });

  it('treats expired documents as absent and lets their id be reused', async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const future = new Date(Date.now() + 60_000).toISOString();
    await store.write([
      { op: 'insert', coll: 'leases', doc: { id: 'old', expires_at: past } },
      { op: 'insert', coll: 'leases', doc: { id: 'live', expires_at: future } },
    ]);
    expect(await store.get('leases', 'old')).toBeNull();
    expect(await store.get('leases', 'live')).not.toBeNull();
    expect((await store.find('leases', {})).map((d) => d.id)).toEqual(['live']);
    await store.write([{ op: 'insert', coll: 'leases', doc: { id: 'old', expires_at: future, again: true } }]);
    expect(await store.get('leases', 'old')).toMatchObject({ again: true });
    await store.write([{ op: 'insert', coll: 'leases', doc: { id: 'gone', expires_at: past } }]);
    expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
    // a live row keeps its id, and so does one that never expires; the refused write changes nothing
    await store.write([{ op: 'insert', coll: 'leases', doc: { id: 'forever', job: 'kept' } }]);
    for (const id of ['live', 'forever'])
      await expect(
        store.write([
          { op: 'insert', coll: 'leases', doc: { id: 'other', expires_at: future } },
          { op: 'insert', coll: 'leases', doc: { id, expires_at: past, job: 'taken' } },
        ]),
      ).rejects.toThrow(/duplicate key in leases/);
    expect(await store.get('leases', 'other')).toBeNull();
    expect(await store.get('leases', 'forever')).toMatchObject({ job: 'kept' });
    expect(await store.get('leases', 'live')).not.toMatchObject({ job: 'taken' });
  });

  it('claims due work atomically: each due document goes to exactly one claimer', async () => {
    const now = new Date();
    const due = new Date(now.getTime() - 1000).toISOString();
    const later = new Date(now.getTime() + 3600_000).toISOString();
    await store.write(
      Array.from({ length: 30 }, (_, i) => ({
        op: 'insert' as const,
        coll: 'jobs',
        doc: { id: `j${i}`, status: i < 25 ? 'pending' : 'done', due_at: i < 20 || i >= 25 ? due : later },
      })),
    );
    const claims = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.claimDue('jobs', { dueField: 'due_at', filter: { status: 'pending' }, now, leaseMs: 60_000, limit: 5 }),
      ),
    );
    const ids = claims.flat().map((d) => d.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    const claimed = (await store.get('jobs', 'j0'))!;
    expect(String(claimed.due_at) > now.toISOString()).toBe(true);
    expect(await store.claimDue('jobs', { dueField: 'due_at', filter: { status: 'pending' }, now, leaseMs: 60_000, limit: 50 })).toEqual(
      [],
    );
  });

  it('counts in fixed windows', async () => {
    const t = new Date('2026-01-01T00:00:10Z');
    expect(await store.increment('k', 1, 60_000, t)).toBe(1);
    expect(await store.increment('k', 2, 60_000, t)).toBe(3);
    expect(await store.increment('k', 1, 60_000, new Date('2026-01-01T00:01:10Z'))).toBe(1);
    const parallel = await Promise.all(Array.from({ length: 20 }, () => store.increment('p', 1, 60_000, t)));
    expect([...parallel].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});
