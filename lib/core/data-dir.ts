/**
 * The data directory holds the master key, the seed and the embedded store: only the service's user may
 * read it. Created 0700 (an existing one is narrowed to 0700), and the SQLite file is created 0600 before
 * SQLite opens it, so its -wal and -shm files (which SQLite creates with the database file's mode) are too.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function ensureDataDir(config: { dataDir: string; storeUrl: string }): void {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  narrow(config.dataDir, 0o700);
  if (!config.storeUrl.startsWith('sqlite:')) return;
  const path = config.storeUrl.slice('sqlite:'.length);
  if (path === ':memory:' || path === '') return;
  const file = resolve(path);
  if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  narrow(file, 0o600);
}

function narrow(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch {
    /* a read-only or foreign-owned mount keeps its mode; the operator chose it */
  }
}
