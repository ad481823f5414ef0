/**
 * Opens the store named by STORE_URL: `sqlite:<path>` (embedded default; several processes on one host),
 * `postgres://…` / `postgresql://…` (the tested cluster store, nodes on several machines) or `mongodb://…`.
 */
import { SqliteStore } from './sqlite.ts';
import { COLLECTIONS } from './collections.ts';
import type { Store } from './port.ts';

export * from './port.ts';

export interface OpenOptions {
  /** PostgreSQL: connections in the pool (STORE_POOL_SIZE) */
  poolSize?: number;
  /** PostgreSQL: told false when the connection is lost and true when it is back */
  onAvailability?: (up: boolean) => void;
}

export async function openStore(url: string, opts: OpenOptions = {}): Promise<Store> {
  let store: Store;
  // the cluster stores' drivers load only when named (the MongoDB driver alone is ~10 MB of an idle node)
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { PostgresStore } = await import('./postgres.ts');
    store = await new PostgresStore(url, { poolSize: opts.poolSize, onAvailability: opts.onAvailability }).connect();
  } else if (url.startsWith('mongodb://') || url.startsWith('mongodb+srv://')) {
    const { MongoStore } = await import('./mongo.ts');
    store = await new MongoStore(url).connect();
  } else if (url.startsWith('sqlite:')) store = new SqliteStore(url.slice('sqlite:'.length));
  else throw new Error(`STORE_URL must be sqlite:<path>, postgres://… or mongodb://…, got ${url.split(':')[0]}:…`);
  try {
    await store.ensure(COLLECTIONS);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}
