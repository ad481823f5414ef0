/**
 * Schema migrations of the SQL stores, with a version table (`_schema_migrations`). They run while the
 * caller holds the store's lock (PostgreSQL: a transaction-scoped advisory lock; SQLite: its write
 * transaction), so when several nodes start at once the first one migrates and the others find the
 * work done. Collections and their indexes are declared (CollectionSpec) and created idempotently after
 * the migrations, under the same lock; a migration is for what a declaration cannot say (extensions,
 * reshaping stored rows).
 *
 * A node whose code knows fewer migrations than the store has applied refuses to start: an older
 * release must not write into a schema it does not know.
 */
import type { DialectName, Dialect } from './dialect.ts';

/** key of the PostgreSQL advisory lock that serializes schema changes ("pays" in ASCII) */
export const STORE_LOCK = 0x70617973;

export interface Migration {
  version: number;
  name: string;
  sql: Record<DialectName, string[]>;
}

/** full indexes of fields most rows leave empty (a ledger spend's payout and hash, a settled attempt's due time), replaced by partial ones */
const SPARSE_REPLACED = ['spend_attempts__execute_due_at', 'ledger_transfers__payout_id', 'ledger_transfers__tx_hash'];

/** indexes that no read needs (see migration 5) */
const UNREAD_INDEXES = ['ledger_accounts__owner', 'spend_attempts__merchant_id__id', 'x402_redemptions__status__next_check_at'];

/** the full indexes of the expiry fields (migration 7): each collection's expiresField, replaced by a partial index (…__p) */
export const FULL_EXPIRY_INDEXES = [
  'payment_sessions__purge_at',
  'session_volume__expires_at',
  'catalog_checkout_refs__purge_at',
  'api_keys__expires_at',
  'registration_intents__expires_at',
  'mail_outbox__expires_at',
  'pow_challenges__expires_at',
  'idempotency__expires_at',
  'invitations__expires_at',
  'ops_window_events__expires_at',
  'alert_state__expires_at',
  'payout_volume__expires_at',
];

/** the same DROP INDEX statements on both dialects (index names are the same on both) */
const dropIndexes = (names: string[]): Migration['sql'] => {
  const texts = names.map((ix) => `DROP INDEX IF EXISTS "${ix}"`);
  return { sqlite: texts, postgres: texts };
};

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'counters of fixed windows (rate limits, caps)',
    sql: {
      sqlite: ['CREATE TABLE IF NOT EXISTS _counters (key TEXT PRIMARY KEY, n INTEGER NOT NULL, expires_at TEXT NOT NULL)'],
      postgres: [
        'CREATE TABLE IF NOT EXISTS _counters (key TEXT COLLATE "C" PRIMARY KEY, n INTEGER NOT NULL, expires_at TEXT COLLATE "C" NOT NULL)',
      ],
    },
  },
  {
    version: 2,
    name: 'trigram text search (catalog discovery)',
    // SQLite's FTS5 trigram tokenizer is built in; PostgreSQL's pg_trgm is a trusted contrib extension
    sql: { sqlite: [], postgres: ['CREATE EXTENSION IF NOT EXISTS pg_trgm'] },
  },
  {
    version: 3,
    name: 'sparse fields indexed partially (WHERE field IS NOT NULL): the full indexes go',
    // their partial successors (…__p, IndexSpec.sparse) are created with the collections after the migrations
    sql: dropIndexes(SPARSE_REPLACED),
  },
  {
    version: 4,
    name: 'wallet transactions lose their transfer_id index (nothing reads by it; every ledger write paid for it)',
    sql: dropIndexes(['wallet_transactions__transfer_id']),
  },
  {
    version: 5,
    name: 'indexes no read needs go (every agent spend, redemption and balance update paid for them)',
    // ledger accounts are found by their ids' prefix; spend attempts by their wallet; redemptions due by a partial index (…__p)
    sql: dropIndexes(UNREAD_INDEXES),
  },
  {
    version: 6,
    name: "payment sessions lose their (merchant_id, created_at) index (the operators' list reads by id, as GET /v1/payment_sessions does)",
    // every session insert paid for its entry, and every update of a session's document recomputed it
    sql: dropIndexes(['payment_sessions__merchant_id__created_at']),
  },
  {
    version: 7,
    name: "expiry fields and sessions' due times indexed partially (WHERE field IS NOT NULL): the full indexes go",
    // every merchant's payment session held a NULL entry in payment_sessions__purge_at (only demo sessions are
    // purged), and every terminal one in payment_sessions__expiry_due_at
    sql: dropIndexes([...FULL_EXPIRY_INDEXES, 'payment_sessions__expiry_due_at']),
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export class SchemaTooNewError extends Error {
  constructor(stored: number, known: number) {
    super(
      `the store's schema is at version ${stored} but this code knows versions up to ${known}: a newer release migrated it; run that release on this node (nothing was changed)`,
    );
    this.name = 'SchemaTooNewError';
  }
}

export interface MigrationRunner {
  exec(sql: string): Promise<void> | void;
  query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> | Array<Record<string, unknown>>;
}

/** Applies the migrations the store lacks, in order; returns the versions applied now. Call it under the lock. */
export async function migrate(d: Dialect, db: MigrationRunner, migrations = MIGRATIONS, now = () => new Date()): Promise<number[]> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS _schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const [row] = await db.query('SELECT MAX(version) AS v FROM _schema_migrations', []);
  const stored = row?.v === null || row?.v === undefined ? 0 : Number(row.v);
  const known = migrations.length ? migrations[migrations.length - 1].version : 0;
  if (stored > known) throw new SchemaTooNewError(stored, known);
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= stored) continue;
    for (const text of m.sql[d.name]) await db.exec(text);
    await db.query('INSERT INTO _schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, now().toISOString()]);
    applied.push(m.version);
  }
  return applied;
}
