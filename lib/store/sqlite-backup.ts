/**
 * Backups of the embedded store (SQLite), at the file level:
 * - backup: an online, consistent copy while the service runs, through SQLite's backup API (node:sqlite
 *   `backup`) over a read-only connection. All pages are copied in one step, i.e. in one read transaction:
 *   the copy is the database as of one commit, and writers are not blocked (WAL). The copy is written
 *   beside the target, checked (`PRAGMA integrity_check`), made a single self-contained file (journal mode
 *   DELETE) and renamed into place, so `<file>` is either a whole backup or absent.
 * - restore: only into a store no process has open. "Open" is decided by SQLite itself: an EXCLUSIVE lock
 *   cannot be taken while any connection (a service, the operator tool, a REPL) holds the database, and a
 *   crashed process holds nothing. The current file is kept beside the restored one, never deleted.
 * PostgreSQL and MongoDB have their own tools (pg_dump, mongodump): the refusal says which.
 */
import { DatabaseSync, backup } from 'node:sqlite';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export class BackupError extends Error {}

/** Every page in one backup step (one read transaction): the copy is one committed state. */
const ALL_PAGES = 2_147_483_647;
/** A store backup has at least these collections (one table each). */
const STORE_TABLES = ['merchants', 'payment_sessions', 'ledger_accounts', 'ledger_transfers'];

/** The SQLite file of a STORE_URL; for another store, what backs it up instead. */
export function sqliteFile(storeUrl: string): string {
  if (storeUrl.startsWith('postgres://') || storeUrl.startsWith('postgresql://')) {
    throw new BackupError(
      'STORE_URL is PostgreSQL: back it up with pg_dump --format=custom --file=<file> "$STORE_URL" (online and consistent), restore into a stopped cluster with pg_restore --clean --if-exists --dbname="$STORE_URL" <file>',
    );
  }
  if (storeUrl.startsWith('mongodb')) {
    throw new BackupError('STORE_URL is MongoDB: back it up with mongodump --uri="$STORE_URL" --archive=<file> --oplog');
  }
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length) : '';
  if (!path || path === ':memory:') throw new BackupError(`STORE_URL ${storeUrl.split(':')[0]}:… names no store file to back up`);
  return resolve(path);
}

/** Flushes a file's (or directory's) data to disk. */
function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface StoreSummary {
  /** rows per store collection (tables), largest first */
  rows: Record<string, number>;
  pages: number;
  bytes: number;
}

/** Integrity and contents of a store file; a BackupError when it is not a sound store. */
function inspect(db: DatabaseSync, file: string): StoreSummary {
  const check = db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
  if (check.length !== 1 || check[0].integrity_check !== 'ok') {
    throw new BackupError(
      `${file} fails SQLite's integrity check: ${check
        .map((c) => c.integrity_check)
        .join('; ')
        .slice(0, 300)}`,
    );
  }
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>
  )
    .map((t) => t.name)
    .filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  const missing = STORE_TABLES.filter((t) => !tables.includes(t));
  if (missing.length) throw new BackupError(`${file} is not a backup of this service's store (no ${missing.join(', ')} table)`);
  const rows: Record<string, number> = {};
  for (const t of tables) rows[t] = Number((db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n);
  const pages = Number((db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count);
  const size = Number((db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  return { rows: Object.fromEntries(Object.entries(rows).sort((a, b) => b[1] - a[1])), pages, bytes: pages * size };
}

export interface BackupResult extends StoreSummary {
  file: string;
  started_at: string;
  duration_ms: number;
}

/**
 * Copies the store at `dbPath` to `dest` (a new file; never overwritten), consistently, while other
 * processes keep writing to it.
 */
export async function backupSqlite(dbPath: string, dest: string): Promise<BackupResult> {
  const target = resolve(dest);
  if (!existsSync(dbPath)) throw new BackupError(`there is no store at ${dbPath}: check DATA_DIR or STORE_URL`);
  if (existsSync(target)) throw new BackupError(`${target} already exists; back up to a new file`);
  if (!existsSync(dirname(target))) throw new BackupError(`the directory of ${target} does not exist`);
  const tmp = resolve(dirname(target), `.${basename(target)}.${process.pid}.partial`);
  const started = new Date();
  const source = new DatabaseSync(dbPath, { readOnly: true, timeout: 10_000 });
  try {
    await backup(source, tmp, { rate: ALL_PAGES });
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  } finally {
    source.close();
  }
  let summary: StoreSummary;
  try {
    chmodSync(tmp, 0o600); // the store holds e-mail addresses, key hashes and sealed secrets
    const copy = new DatabaseSync(tmp);
    try {
      copy.exec('PRAGMA journal_mode = DELETE'); // one self-contained file
      summary = inspect(copy, target);
    } finally {
      copy.close();
    }
    fsyncPath(tmp);
    renameSync(tmp, target);
    fsyncPath(dirname(target));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return { file: target, ...summary, started_at: started.toISOString(), duration_ms: Date.now() - started.getTime() };
}

/** Opens a backup file read-only and checks it is a sound store; the caller closes it. */
export function openBackup(file: string): { db: DatabaseSync; summary: StoreSummary } {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new BackupError(`${path} is not a file`);
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return { db, summary: inspect(db, path) };
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Holds an exclusive lock on the store at `dbPath`, or refuses when any process has it open. Returns
 * the release (closing the connection: SQLite checkpoints and removes the WAL then).
 */
export function lockStopped(dbPath: string): () => void {
  if (!existsSync(dbPath)) return () => undefined;
  const db = new DatabaseSync(dbPath, { timeout: 200 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if (/locked|busy/i.test((e as Error).message)) {
      throw new BackupError(
        `${dbPath} is open in another process (the service, an operator command or a REPL): stop the service that uses this data dir, then restore`,
      );
    }
    throw e;
  }
  return () => {
    db.exec('ROLLBACK');
    db.close();
  };
}

export interface RestoreResult extends StoreSummary {
  restored_from: string;
  store: string;
  /** where the store that was there before is kept (null: there was none) */
  previous_saved_as: string | null;
}

/**
 * Restores `file` (a backup made by backupSqlite) as the store at `dbPath`, which no process may have
 * open. `check` runs on the opened backup before anything changes (the caller's key-material checks).
 */
export async function restoreSqlite(
  file: string,
  dbPath: string,
  check: (backupDb: DatabaseSync) => void,
  now = new Date(),
): Promise<RestoreResult> {
  const { db: source, summary } = openBackup(file);
  const tmp = resolve(dirname(dbPath), `.${basename(dbPath)}.${process.pid}.restoring`);
  let release = () => undefined as void;
  try {
    check(source);
    mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
    release = lockStopped(dbPath);
    await backup(source, tmp, { rate: ALL_PAGES });
  } catch (e) {
    rmSync(tmp, { force: true });
    release();
    throw e;
  } finally {
    source.close();
  }
  chmodSync(tmp, 0o600);
  fsyncPath(tmp);
  // closing the lock checkpoints and removes the current store's WAL; anything left of it is stale
  release();
  let previous: string | null = null;
  if (existsSync(dbPath)) {
    // kept under a second name first, then replaced in one rename: a crash at any point leaves a whole store at dbPath
    previous = `${dbPath}.pre-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
    linkSync(dbPath, previous);
    for (const suffix of ['-wal', '-shm']) if (existsSync(dbPath + suffix)) renameSync(dbPath + suffix, previous + suffix);
  }
  renameSync(tmp, dbPath);
  fsyncPath(dirname(dbPath));
  return { restored_from: resolve(file), store: dbPath, previous_saved_as: previous, ...summary };
}
