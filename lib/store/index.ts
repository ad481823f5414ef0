/** Opens the store named by STORE_URL: `sqlite:<path>` (embedded default) or `mongodb://…` (cluster). */
import { SqliteStore } from './sqlite.ts';
import { MongoStore } from './mongo.ts';
import { COLLECTIONS } from './collections.ts';
import type { Store } from './port.ts';

export * from './port.ts';

export async function openStore(url: string): Promise<Store> {
  let store: Store;
  if (url.startsWith('mongodb://') || url.startsWith('mongodb+srv://')) store = await new MongoStore(url).connect();
  else if (url.startsWith('sqlite:')) store = new SqliteStore(url.slice('sqlite:'.length));
  else throw new Error(`STORE_URL must be sqlite:<path> or mongodb://…, got ${url.split(':')[0]}:…`);
  await store.ensure(COLLECTIONS);
  return store;
}
