/**
 * The SQLite text index behind catalog search (CollectionSpec.textIndex): it is built for a collection
 * that already has rows (created before it had the index), survives VACUUM and reopening, and keeps
 * Unicode case-insensitivity.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { tempDir } from '../helpers/node.ts';

describe('SQLite text index', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('text-index-');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes a collection created without it, and stays right after VACUUM and reopening', async () => {
    const file = join(dir, 'db.sqlite');
    const names = ['Grüne Äpfel', 'ÉCOLE', 'plain box', 'Straße'];
    let store = new SqliteStore(file);
    await store.ensure([{ name: 'items', indexes: [{ fields: ['kind'] }] }]);
    await store.write(
      Array.from({ length: 3000 }, (_, i) => ({
        op: 'insert' as const,
        coll: 'items',
        doc: { id: `i${String(i).padStart(5, '0')}`, kind: i % 2 ? 'x' : 'y', name: `${names[i % 4]} ${i}` },
      })),
    );
    await store.close();

    store = new SqliteStore(file);
    await store.ensure([{ name: 'items', indexes: [{ fields: ['kind'] }], textIndex: ['name'] }]);
    const find = (q: string, limit?: number) => store.find('items', {}, { limit, text: { q, fields: ['name'] }, desc: true });
    expect((await find('äpfel 2996')).map((d) => d.id)).toEqual(['i02996']);
    expect((await find('grüne äpfel 4', 3)).map((d) => d.id)).toEqual(['i00496', 'i00492', 'i00488']);
    expect((await find('école 1')).length).toBe((await store.find('items', {})).filter((d) => /^ÉCOLE 1/.test(String(d.name))).length);
    expect(await store.count('items', {})).toBe(3000);
    // delete the oldest rows, VACUUM (which renumbers plain rowids), then search for the rest
    await store.write(
      Array.from({ length: 1000 }, (_, i) => ({ op: 'delete' as const, coll: 'items', id: `i${String(i).padStart(5, '0')}` })),
    );
    await store.close();
    const raw = new DatabaseSync(file);
    raw.exec('VACUUM');
    raw.close();
    store = new SqliteStore(file);
    await store.ensure([{ name: 'items', indexes: [{ fields: ['kind'] }], textIndex: ['name'] }]);
    expect((await find('plain box 1002')).map((d) => d.id)).toEqual(['i01002']);
    expect((await find('äpfel 996')).map((d) => d.id)).toEqual([]);
    expect((await find('straße 2999', 5)).map((d) => d.id)).toEqual(['i02999']);
    await store.write([{ op: 'insert', coll: 'items', doc: { id: 'new', kind: 'x', name: 'Brand NEW straße' } }]);
    expect((await find('new straße', 5)).map((d) => d.id)).toEqual(['new']);
    await store.close();
  });
});
