/** SQLite statements prepared once per connection: preparing is a large share of a small query's cost. */
import type { DatabaseSync, StatementSync } from 'node:sqlite';

/** SQL texts kept prepared per connection; `$in` lists of many lengths could grow it without a bound */
const STATEMENT_CACHE_MAX = 500;

export class Prepared {
  private cache = new Map<string, StatementSync>();
  private db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.db = db;
  }

  get(sql: string): StatementSync {
    let st = this.cache.get(sql);
    if (!st) {
      if (this.cache.size >= STATEMENT_CACHE_MAX) this.cache.clear();
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }
}
