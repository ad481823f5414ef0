/**
 * SQLite group commit: the writes of one event-loop turn share a transaction with a savepoint each. A
 * failing write fails alone, a write is committed (visible to another connection) when its promise
 * resolves, and no read sees a write before it is committed. The reads of one burst share a snapshot that
 * ends before the event loop's next callback.
 */
import { rmSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { DuplicateKeyError, VersionConflictError } from '../../lib/store/port.ts';
import { tempDir } from '../helpers/node.ts';

describe('SQLite group commit', () => {
  let dir: string;
  let store: SqliteStore;
  let other: SqliteStore;

  beforeEach(async () => {
    dir = tempDir('group-');
    store = new SqliteStore(join(dir, 'db.sqlite'));
    await store.ensure([{ name: 'things', indexes: [{ fields: ['slug'], unique: true }] }]);
    // another process's view: connections of its own
    other = new SqliteStore(join(dir, 'db.sqlite'), { separate: true });
  });

  afterEach(async () => {
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** which of these ids another connection finds committed */
  const committed = async (ids: string[]) =>
    Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await other.get('things', id)) !== null])));

  it('a failing write of a turn fails alone; its neighbours commit', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'taken', slug: 'taken' } }]);
    const results = await Promise.allSettled([
      store.write([{ op: 'insert', coll: 'things', doc: { id: 'a', slug: 'a' } }]),
      // two ops, the second breaks a unique index: neither lands
      store.write([
        { op: 'insert', coll: 'things', doc: { id: 'b', slug: 'b' } },
        { op: 'insert', coll: 'things', doc: { id: 'b2', slug: 'taken' } },
      ]),
      store.write([{ op: 'cas', coll: 'things', doc: { id: 'taken', slug: 'taken' }, expected: 7 }]),
      store.write([{ op: 'insert', coll: 'things', doc: { id: 'c', slug: 'c' } }]),
      // one op, one statement (no savepoint): its row is written before the unique index refuses it, and
      // SQLite takes the whole statement back
      store.write([{ op: 'insert', coll: 'things', doc: { id: 'd', slug: 'taken' } }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected']);
    expect((results[4] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateKeyError);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateKeyError);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
    expect(await committed(['a', 'b', 'b2', 'c', 'd'])).toEqual({ a: true, b: false, b2: false, c: true, d: false });
  });

  it('a failing first write of a turn (several ops: it runs without a savepoint) is undone whole; the later ones commit', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'held', slug: 'held' } }]);
    const results = await Promise.allSettled([
      // the turn's first write: its first op lands before its second breaks the unique index
      store.write([
        { op: 'insert', coll: 'things', doc: { id: 'f1', slug: 'f1' } },
        { op: 'insert', coll: 'things', doc: { id: 'f2', slug: 'held' } },
      ]),
      store.write([
        { op: 'insert', coll: 'things', doc: { id: 'g1', slug: 'g1' } },
        { op: 'insert', coll: 'things', doc: { id: 'g2', slug: 'g2' } },
      ]),
      store.write([
        { op: 'insert', coll: 'things', doc: { id: 'h1', slug: 'h1' } },
        { op: 'insert', coll: 'things', doc: { id: 'h2', slug: 'g1' } },
      ]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateKeyError);
    expect(await committed(['f1', 'f2', 'g1', 'g2', 'h1', 'h2'])).toEqual({
      f1: false,
      f2: false,
      g1: true,
      g2: true,
      h1: false,
      h2: false,
    });
  });

  it('a write is committed when its promise resolves, and not readable before', async () => {
    const doc = { id: 'x', slug: 'x' };
    const pending = store.write([{ op: 'insert', coll: 'things', doc }]);
    // same turn: the transaction is still open; neither this store's reads nor another connection see it
    const early = store.get('things', 'x');
    const earlyOther = other.get('things', 'x');
    expect(await early).toBeNull();
    expect(await earlyOther).toBeNull();
    await pending;
    expect(await other.get('things', 'x')).toMatchObject({ id: 'x', version: 1 });
    expect(await store.get('things', 'x')).toMatchObject({ id: 'x', version: 1 });
  });

  it('in an open turn, reads of any collection see what was committed, never the turn’s own writes (property)', async () => {
    await store.ensure([{ name: 'things', indexes: [{ fields: ['slug'], unique: true }] }, { name: 'others' }, { name: 'thirds' }]);
    const colls = ['things', 'others', 'thirds'] as const;
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ write: fc.boolean(), coll: fc.constantFrom(...colls), key: fc.integer({ min: 0, max: 3 }), find: fc.boolean() }),
          { minLength: 1, maxLength: 12 },
        ),
        async (steps) => {
          round++;
          // what is committed before the turn: one row per collection and key, found by get and by find
          const committed = new Map<string, string>();
          await store.write(
            colls.flatMap((coll) =>
              [0, 1].map((key) => {
                const id = `${round}:${key}`;
                committed.set(`${coll}/${id}`, 'before');
                return { op: 'insert' as const, coll, doc: { id, slug: `${coll}-${id}`, v: 'before' } };
              }),
            ),
          );
          const writes: Promise<void>[] = [];
          const reads: Array<{ expected: string | undefined; seen: Promise<string | undefined> }> = [];
          // one turn: writes (new rows and changes of committed ones) and reads in any order
          for (const [i, s] of steps.entries()) {
            const id = `${round}:${s.key}`;
            if (s.write) {
              writes.push(store.write([{ op: 'upsert', coll: s.coll, doc: { id, slug: `${s.coll}-${id}-${i}`, v: `turn ${i}` } }]));
            } else {
              const seen = s.find
                ? store.find<{ id: string; v: string }>(s.coll, { id }).then((r) => r[0]?.v)
                : store.get<{ id: string; v: string }>(s.coll, id).then((r) => r?.v);
              reads.push({ expected: committed.get(`${s.coll}/${id}`), seen });
            }
          }
          for (const r of reads) expect(await r.seen).toBe(r.expected);
          await Promise.all(writes);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a write that collides with an earlier write of its turn fails after that one is readable', async () => {
    const first = store.write([{ op: 'insert', coll: 'things', doc: { id: 'k', slug: 'k' } }]);
    const second = store.write([{ op: 'insert', coll: 'things', doc: { id: 'k', slug: 'k2' } }]);
    await expect(second).rejects.toBeInstanceOf(DuplicateKeyError);
    // the caller of the losing write can read the winner at once (what idempotency and CAS retries do)
    expect(await store.get('things', 'k')).toMatchObject({ slug: 'k' });
    await first;
  });

  it('counters join the turn and return what they committed', async () => {
    const counts = await Promise.all(Array.from({ length: 10 }, () => store.increment('k', 1, 60_000)));
    expect([...counts].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await other.increment('k', 1, 60_000)).toBe(11);
  });

  it('any mix of good and bad writes in one turn keeps exactly the good ones (property)', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), async (good) => {
        round++;
        const ids = good.map((_, i) => `r${round}-${i}`);
        const results = await Promise.allSettled(
          good.map((ok, i) =>
            store.write([
              { op: 'insert', coll: 'things', doc: { id: ids[i], slug: ids[i] } },
              ...(ok ? [] : [{ op: 'insert' as const, coll: 'things', doc: { id: `${ids[i]}-dup`, slug: ids[i] } }]),
            ]),
          ),
        );
        expect(results.map((r) => r.status === 'fulfilled')).toEqual(good);
        for (let i = 0; i < good.length; i++) expect((await other.get('things', ids[i])) !== null).toBe(good[i]);
      }),
      { numRuns: 30 },
    );
  });

  it('two stores of one process on one file share the connection and its turn (no self-deadlock)', async () => {
    const twin = new SqliteStore(join(dir, 'db.sqlite'));
    try {
      await Promise.all([
        store.write([{ op: 'insert', coll: 'things', doc: { id: 'p', slug: 'p' } }]),
        twin.write([{ op: 'insert', coll: 'things', doc: { id: 'q', slug: 'q' } }]),
      ]);
      expect(await twin.get('things', 'p')).not.toBeNull();
    } finally {
      await twin.close();
    }
    // closing one handle leaves the other working
    expect(await store.get('things', 'q')).not.toBeNull();
  });

  it('the reads of one burst share a snapshot; a read in a later callback sees what another process committed', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'a', slug: 'a' } }]);
    const raw = new DatabaseSync(join(dir, 'db.sqlite'));
    try {
      raw.exec('PRAGMA busy_timeout = 10000');
      // the first read of this burst begins the shared read transaction; the raw connection commits after it
      const first = store.get('things', 'a');
      raw.prepare('INSERT INTO things (id, version, data) VALUES (?, 1, ?)').run('b', JSON.stringify({ id: 'b', slug: 'b' }));
      const sameBurst = store.get('things', 'b');
      expect(await first).toMatchObject({ id: 'a' });
      expect(await sameBurst).toBeNull();
      // the loop's next callback (where a request that arrived after the commit runs) reads a fresh snapshot
      await new Promise((r) => setTimeout(r, 0));
      expect(await store.get('things', 'b')).toMatchObject({ id: 'b', version: 1 });
      // a write after a read of the same burst commits (in the burst's transaction, which it takes over)
      expect(await store.get('things', 'a')).not.toBeNull();
      await store.write([{ op: 'insert', coll: 'things', doc: { id: 'c', slug: 'c' } }]);
      expect(await committed(['c'])).toEqual({ c: true });
    } finally {
      raw.close();
    }
  });

  it('a write after a read of its burst whose snapshot another process moved past runs again on what that process committed', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'a', slug: 'a' } }]);
    const raw = new DatabaseSync(join(dir, 'db.sqlite'));
    try {
      raw.exec('PRAGMA busy_timeout = 10000');
      await new Promise((r) => setTimeout(r, 0));
      // the burst's read begins its read transaction (a at version 1); another process then changes a
      const read = store.get('things', 'a');
      raw.prepare('UPDATE things SET version = 2, data = ? WHERE id = ?').run(JSON.stringify({ id: 'a', slug: 'a-theirs' }), 'a');
      // the same burst's writes: SQLite refuses the stale snapshot its write lock; the writes run on the new one
      const cas = store.write([{ op: 'cas', coll: 'things', doc: { id: 'a', slug: 'a-mine' }, expected: 1 }]);
      const insert = store.write([{ op: 'insert', coll: 'things', doc: { id: 'c', slug: 'c' } }]);
      expect(await read).toMatchObject({ slug: 'a', version: 1 });
      await expect(cas).rejects.toBeInstanceOf(VersionConflictError);
      await insert;
      expect(await other.get('things', 'a')).toMatchObject({ slug: 'a-theirs', version: 2 });
      expect(await committed(['c'])).toEqual({ c: true });
      // and at the version it now reads, the compare-and-set commits
      expect(await store.write([{ op: 'cas', coll: 'things', doc: { id: 'a', slug: 'a-mine' }, expected: 2 }])).toBeUndefined();
      expect(await other.get('things', 'a')).toMatchObject({ slug: 'a-mine', version: 3 });
    } finally {
      raw.close();
    }
  });

  it('a write after a read of its burst while another process holds the write lock waits for it, then commits', async () => {
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'a', slug: 'a' } }]);
    // another process: a thread with its own connection that holds the write lock until 200 ms after this
    // test says it is about to write (however late its messages arrive, the lock is held then)
    const go = new Int32Array(new SharedArrayBuffer(8));
    const holder = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const { DatabaseSync } = require('node:sqlite');
       const db = new DatabaseSync(workerData.file);
       db.exec('PRAGMA busy_timeout = 10000; BEGIN IMMEDIATE');
       db.prepare('INSERT INTO things (id, version, data) VALUES (?, 1, ?)').run('theirs', JSON.stringify({ id: 'theirs', slug: 'theirs' }));
       parentPort.postMessage('locked');
       Atomics.wait(workerData.go, 0, 0);
       Atomics.wait(workerData.go, 1, 0, 200);
       db.exec('COMMIT');
       db.close();`,
      { eval: true, workerData: { file: join(dir, 'db.sqlite'), go } },
    );
    const exited = new Promise((r) => holder.once('exit', r));
    await new Promise<void>((resolve) => holder.once('message', () => resolve()));
    try {
      Atomics.store(go, 0, 1);
      Atomics.notify(go, 0);
      const t0 = performance.now();
      const read = store.get('things', 'a');
      const write = store.write([{ op: 'insert', coll: 'things', doc: { id: 'mine', slug: 'mine' } }]);
      expect(await read).toMatchObject({ id: 'a' });
      await write;
      // it waited for the lock (SQLite refuses a read transaction's write lock at once: the write ran again)
      expect(performance.now() - t0).toBeGreaterThan(150);
      expect(await committed(['theirs', 'mine'])).toEqual({ theirs: true, mine: true });
    } finally {
      Atomics.store(go, 0, 1);
      Atomics.notify(go, 0);
      await exited;
    }
  });

  it('notices a commit of another process, not its own', async () => {
    const v0 = store.externalVersion();
    await store.write([{ op: 'insert', coll: 'things', doc: { id: 'own', slug: 'own' } }]);
    expect(store.externalVersion()).toBe(v0);
    await other.write([{ op: 'insert', coll: 'things', doc: { id: 'theirs', slug: 'theirs' } }]);
    expect(store.externalVersion()).not.toBe(v0);
  });

  it('a growing WAL is copied into the database by the worker thread; what was written survives the store closing', async () => {
    const file = join(dir, 'db.sqlite');
    const big = 'x'.repeat(4000);
    // about 2 MB of WAL over 100 commits: past the checkpointer's start (1 MB, looked at every 64 commits),
    // short of SQLite's own autocheckpoint in a commit (1,000 pages)
    for (let turn = 0; turn < 100; turn++)
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          store.write([{ op: 'insert', coll: 'things', doc: { id: `t${turn}-${i}`, slug: `t${turn}-${i}`, big } }]),
        ),
      );
    const before = statSync(file).size;
    expect(before).toBeLessThan(1 << 20);
    // nothing writes now: only a checkpoint moves the pages into the database file
    let copied = false;
    for (let i = 0; i < 200 && !copied; i++) {
      await new Promise((r) => setTimeout(r, 50));
      copied = statSync(file).size >= 2_000_000;
    }
    expect(copied).toBe(true);
    await store.close();
    await other.close();
    store = new SqliteStore(file);
    other = new SqliteStore(file, { separate: true });
    await store.ensure([{ name: 'things', indexes: [{ fields: ['slug'], unique: true }] }]);
    expect(await store.count('things', {})).toBe(500);
    expect((await store.get<{ id: string; big: string }>('things', 't99-4'))?.big).toBe(big);
  });
});
