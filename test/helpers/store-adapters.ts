/**
 * Every store adapter a suite runs against: SQLite and PostgreSQL always (a fresh database per `open`, on
 * the server test/helpers/postgres.ts finds or starts), MongoDB when MONGO_URL is set.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { MongoStore } from '../../lib/store/mongo.ts';
import { PostgresStore } from '../../lib/store/postgres.ts';
import type { Store } from '../../lib/store/port.ts';
import { freshDatabase, type TestDatabase } from './postgres.ts';
import { tempDir } from './node.ts';

export interface Adapter {
  name: 'sqlite' | 'postgres' | 'mongodb';
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

/** the adapters, each database named after `prefix` */
export function storeAdapters(prefix: string): Adapter[] {
  let dir = '';
  let db: TestDatabase | null = null;
  const adapters: Adapter[] = [
    {
      name: 'sqlite',
      async open() {
        dir = tempDir(`${prefix}-`);
        return new SqliteStore(join(dir, 'test.db'));
      },
      async cleanup() {
        rmSync(dir, { recursive: true, force: true });
      },
    },
    {
      name: 'postgres',
      async open() {
        db = await freshDatabase(prefix);
        return new PostgresStore(db.url).connect();
      },
      async cleanup() {
        await db?.drop();
      },
    },
  ];
  if (process.env.MONGO_URL)
    adapters.push({
      name: 'mongodb',
      async open() {
        const base = new URL(process.env.MONGO_URL!);
        base.pathname = `/${prefix}_${Date.now()}`;
        return new MongoStore(base.toString()).connect();
      },
      async cleanup() {
        /* each run uses a fresh database */
      },
    });
  return adapters;
}
