/**
 * The SQLite backup and restore of the embedded store (lib/store/sqlite-backup.ts, lib/ops/backup.ts) on
 * real store files: a copy taken while the same store keeps committing, what a restore refuses (a store
 * in use, a file that is not a sound store backup, a data dir with other key material), and what it keeps.
 */
import { existsSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openStore, type Store } from '../../lib/store/index.ts';
import { BackupError, backupSqlite, lockStopped, restoreSqlite, sqliteFile } from '../../lib/store/sqlite-backup.ts';
import { keyMaterialProblems, restoreStore } from '../../lib/ops/backup.ts';
import { Keyring } from '../../lib/core/keyring.ts';
import { AddressDeriver, loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { tempDir } from '../helpers/node.ts';

const refusal = async (f: () => Promise<unknown> | unknown): Promise<string> => {
  try {
    await f();
  } catch (e) {
    expect(e).toBeInstanceOf(BackupError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('store backups (SQLite)', () => {
  let dir: string;
  let store: Store;
  const db = () => join(dir, 'service.db');

  beforeEach(async () => {
    dir = tempDir('pay-store-backup-');
    store = await openStore(`sqlite:${db()}`);
  });
  afterEach(async () => {
    await store?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies one committed state while the store keeps committing', async () => {
    let stop = false;
    let n = 0;
    const writer = (async () => {
      while (!stop) {
        // a session and its ledger transfer in one atomic write: a copy holds both or neither
        const id = `ps_${String(n).padStart(8, '0')}`;
        await store.write([
          { op: 'insert', coll: 'payment_sessions', doc: { id, status: 'completed', payload: 'x'.repeat(2000) } },
          { op: 'insert', coll: 'ledger_transfers', doc: { id: `tr_${id}`, session_id: id } },
        ]);
        n++;
      }
    })();
    while (n < 500) await new Promise((r) => setTimeout(r, 5));
    const before = n;
    const result = await backupSqlite(db(), join(dir, 'copy.db'));
    const after = n;
    stop = true;
    await writer;
    expect(result.rows.payment_sessions).toBeGreaterThanOrEqual(before);
    expect(result.rows.payment_sessions).toBeLessThanOrEqual(after + 1);
    expect(result.rows.ledger_transfers).toBe(result.rows.payment_sessions);
    const copy = new DatabaseSync(result.file, { readOnly: true });
    const orphans = copy
      .prepare(
        "SELECT count(*) AS n FROM payment_sessions s WHERE NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = 'tr_' || s.id)",
      )
      .get() as { n: number };
    expect(orphans.n).toBe(0);
    expect(copy.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'delete' });
    copy.close();
    // one whole file, private, and no leftovers beside it
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    expect(await refusal(() => backupSqlite(db(), result.file))).toMatch(/already exists/);
  });

  it('restores only into a store no process has open, keeping the one that was there', async () => {
    await store.write([{ op: 'insert', coll: 'merchants', doc: { id: 'mer_old', name: 'before' } }]);
    const backup = await backupSqlite(db(), join(dir, 'b.db'));
    await store.write([{ op: 'insert', coll: 'merchants', doc: { id: 'mer_new', name: 'after' } }]);
    expect(await refusal(() => restoreSqlite(backup.file, db(), () => undefined))).toMatch(/is open in another process/);
    expect(await refusal(() => lockStopped(db()))).toMatch(/stop the service/);
    await store.close();

    const now = new Date('2030-01-02T03:04:05.678Z');
    const r = await restoreSqlite(backup.file, db(), () => undefined, now);
    expect(r.previous_saved_as).toBe(`${db()}.pre-restore-2030-01-02T03-04-05-678Z`);
    store = await openStore(`sqlite:${db()}`);
    expect(await store.get('merchants', 'mer_old')).toMatchObject({ name: 'before' });
    expect(await store.get('merchants', 'mer_new')).toBeNull();
    const kept = new DatabaseSync(r.previous_saved_as!, { readOnly: true });
    expect((kept.prepare("SELECT count(*) AS n FROM merchants WHERE id = 'mer_new'").get() as { n: number }).n).toBe(1);
    kept.close();
  });

  it('refuses a file that is not a sound store backup, and a refused check changes nothing', async () => {
    await store.close();
    const other = join(dir, 'other.db');
    new DatabaseSync(other).exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    expect(await refusal(() => restoreSqlite(other, db(), () => undefined))).toMatch(/is not a backup of this service's store/);
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, Buffer.alloc(8192, 7));
    await expect(restoreSqlite(garbage, db(), () => undefined)).rejects.toThrow(/not a database|malformed|integrity/);
    const good = await backupSqlite(db(), join(dir, 'good.db'));
    await expect(
      restoreSqlite(good.file, db(), () => {
        throw new BackupError('keys differ');
      }),
    ).rejects.toThrow('keys differ');
    expect(readdirSync(dir).filter((f) => f.includes('pre-restore') || f.includes('restoring'))).toEqual([]);
  });

  it('names the tool for PostgreSQL and MongoDB stores', async () => {
    expect(await refusal(() => sqliteFile('postgres://u@h/db'))).toMatch(/pg_dump --format=custom --file=<file> "\$STORE_URL"/);
    expect(await refusal(() => sqliteFile('mongodb://h/db'))).toMatch(/mongodump/);
    expect(sqliteFile(`sqlite:${db()}`)).toBe(db());
  });

  it("a restore needs the data dir's key material to be the backup's: the seed of its addresses and the master key of its sealed secrets", async () => {
    const source = tempDir('pay-keys-');
    const target = tempDir('pay-keys-');
    try {
      const keyring = Keyring.load(source, {});
      const fingerprint = new AddressDeriver(loadSeedPhrase(source, {}).phrase).fingerprint;
      await store.write([
        { op: 'insert', coll: 'payment_sessions', doc: { id: 'ps_1', key_fingerprint: fingerprint } },
        { op: 'insert', coll: 'merchants', doc: { id: 'mer_1', webhook_secrets: [{ sealed: keyring.seal('whsec_x') }] } },
      ]);
      const backup = await backupSqlite(db(), join(dir, 'k.db'));
      const b = new DatabaseSync(backup.file, { readOnly: true });
      try {
        expect(keyMaterialProblems(b, target, {})).toEqual([expect.stringMatching(/^no seed/), expect.stringMatching(/^no master key/)]);
        // other key material: named, nothing created in the data dir
        Keyring.load(target, {});
        loadSeedPhrase(target, {});
        expect(keyMaterialProblems(b, target, {})).toEqual([
          expect.stringMatching(/^the seed \(key fingerprint \w+\) is not the one/),
          expect.stringMatching(/^the master key does not open/),
        ]);
        copyFileSync(join(source, 'seed'), join(target, 'seed'));
        copyFileSync(join(source, 'master.key'), join(target, 'master.key'));
        expect(keyMaterialProblems(b, target, {})).toEqual([]);
        // the same material from the environment, as a cluster gives it
        const env = { SEED_MNEMONIC: loadSeedPhrase(source, {}).phrase, MASTER_KEY: 'ab'.repeat(32) };
        expect(keyMaterialProblems(b, tempDir('pay-keys-'), env)).toEqual([expect.stringMatching(/^the master key does not open/)]);
      } finally {
        b.close();
      }
      const fresh = tempDir('pay-keys-');
      expect(
        await refusal(() => restoreStore({ dataDir: fresh, storeUrl: `sqlite:${join(fresh, 'service.db')}` }, backup.file, {})),
      ).toMatch(/cannot serve this backup: no seed/);
      expect(existsSync(join(fresh, 'seed')) || existsSync(join(fresh, 'master.key')) || existsSync(join(fresh, 'service.db'))).toBe(false);
    } finally {
      rmSync(source, { recursive: true, force: true });
      rmSync(target, { recursive: true, force: true });
    }
  });
});
