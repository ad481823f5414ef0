/**
 * The operator's backup and restore of the embedded store (`npm run operator -- backup <file>` and
 * `… restore <file>`): the SQLite copy itself is lib/store/sqlite-backup.ts; here, where the store is
 * (DATA_DIR, STORE_URL) and the key material a restored store needs. A backup holds the store only: the
 * master key (DATA_DIR/master.key or MASTER_KEY) opens its sealed webhook secrets and the seed
 * (DATA_DIR/seed or SEED_MNEMONIC) derives its deposit and wallet addresses. Both are kept apart from
 * store backups (they never change), and a restore refuses a data dir whose key material does not match
 * the backup's, before anything changes.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Config } from '../../config/index.ts';
import { Keyring } from '../core/keyring.ts';
import { AddressDeriver, loadSeedPhrase } from '../addresses/addresses.ts';
import { BackupError, backupSqlite, restoreSqlite, sqliteFile, type BackupResult, type RestoreResult } from '../store/sqlite-backup.ts';

type Env = Record<string, string | undefined>;

/** An online, consistent copy of the embedded store at `file`. */
export function backupStore(config: Pick<Config, 'storeUrl'>, file: string): Promise<BackupResult> {
  return backupSqlite(sqliteFile(config.storeUrl), file);
}

/** The seed's fingerprint as the service would load it, without creating a seed; null when there is none. */
function seedFingerprint(dataDir: string, env: Env): string | null {
  if (!env.SEED_MNEMONIC?.trim() && !existsSync(resolve(dataDir, 'seed'))) return null;
  return new AddressDeriver(loadSeedPhrase(dataDir, env).phrase).fingerprint;
}

/**
 * What keeps the data dir's key material from serving the backup: the seed must be the one its
 * sessions' addresses came from, and the master key must open its sealed webhook secrets.
 */
export function keyMaterialProblems(backup: DatabaseSync, dataDir: string, env: Env): string[] {
  const problems: string[] = [];
  const fingerprints = (
    backup.prepare("SELECT DISTINCT json_extract(data, '$.key_fingerprint') AS f FROM payment_sessions").all() as Array<{ f: unknown }>
  )
    .map((r) => r.f)
    .filter((f): f is string => typeof f === 'string');
  if (fingerprints.length) {
    const ours = seedFingerprint(dataDir, env);
    if (ours === null) problems.push(`no seed: copy the original ${resolve(dataDir, 'seed')} (or set SEED_MNEMONIC as the service had it)`);
    else if (!fingerprints.includes(ours))
      problems.push(
        `the seed (key fingerprint ${ours}) is not the one the backup's addresses come from (${fingerprints.join(', ')}): copy the original seed file or SEED_MNEMONIC`,
      );
  }
  const sealed = (
    backup.prepare("SELECT json_extract(data, '$.webhook_secrets[0].sealed') AS s FROM merchants LIMIT 20").all() as Array<{ s: unknown }>
  )
    .map((r) => r.s)
    .filter((s): s is string => typeof s === 'string');
  if (sealed.length) {
    const keyring = Keyring.existing(dataDir, env);
    if (!keyring)
      problems.push(`no master key: copy the original ${resolve(dataDir, 'master.key')} (or set MASTER_KEY as the service had it)`);
    else if (!sealed.some((s) => opens(keyring, s)))
      problems.push("the master key does not open the backup's sealed webhook secrets: copy the original master.key or MASTER_KEY");
  }
  return problems;
}

function opens(keyring: Keyring, sealed: string): boolean {
  try {
    keyring.open(sealed);
    return true;
  } catch {
    return false;
  }
}

/** Restores a backup as the embedded store of a stopped data dir (refused while any process has it open). */
export function restoreStore(config: Pick<Config, 'storeUrl' | 'dataDir'>, file: string, env: Env = process.env): Promise<RestoreResult> {
  const dbPath = sqliteFile(config.storeUrl);
  return restoreSqlite(file, dbPath, (backup) => {
    const problems = keyMaterialProblems(backup, config.dataDir, env);
    if (problems.length) throw new BackupError(`the data dir ${config.dataDir} cannot serve this backup: ${problems.join('; ')}`);
  });
}

export { BackupError };
