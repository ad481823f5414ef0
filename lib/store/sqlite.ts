/**
 * SQLite adapter of the store port on node:sqlite: one table per collection (id, version, JSON data),
 * expression indexes on JSON fields, WAL so that several processes on one host can share the file.
 *
 * Speed without changing what a caller sees:
 * - every SQL text is prepared once per connection (a bounded statement cache);
 * - group commit: the writes of one event-loop turn share one transaction, each in its own savepoint,
 *   so a failing write rolls back alone and its neighbours commit; every write's promise resolves only
 *   after COMMIT (durable as before: WAL, synchronous=NORMAL), and rejects if the COMMIT fails;
 * - reads go through a second, read-only connection, so they never see a write that is not committed
 *   yet (a reply or a webhook can never be built on data that a crash would take back).
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DuplicateKeyError,
  VersionConflictError,
  type ClaimOptions,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type Store,
  type WriteOp,
} from './port.ts';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function ident(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid collection name ${name}`);
  return `"${name}"`;
}

/** the SQL expression of a field; identical text in indexes and queries so that the planner uses them */
function col(field: string): string {
  if (field === 'id') return 'id';
  if (!PATH.test(field)) throw new Error(`invalid field ${field}`);
  return `json_extract(data, '$.${field}')`;
}

function bind(v: unknown): SQLInputValue {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v === undefined) return null;
  return v as SQLInputValue;
}

function where(filter: Filter, params: SQLInputValue[]): string {
  const parts: string[] = [];
  for (const [field, cond] of Object.entries(filter)) {
    const c = col(field);
    if (cond === null) parts.push(`${c} IS NULL`);
    else if (typeof cond !== 'object') {
      parts.push(`${c} = ?`);
      params.push(bind(cond));
    } else {
      if (cond.$in) {
        if (cond.$in.length === 0) parts.push('0');
        else {
          parts.push(`${c} IN (${cond.$in.map(() => '?').join(',')})`);
          params.push(...cond.$in.map(bind));
        }
      }
      if ('$ne' in cond) {
        if (cond.$ne === null) parts.push(`${c} IS NOT NULL`);
        else {
          parts.push(`(${c} IS NULL OR ${c} <> ?)`);
          params.push(bind(cond.$ne));
        }
      }
      if (cond.$lt !== undefined) {
        parts.push(`${c} < ?`);
        params.push(bind(cond.$lt));
      }
      if (cond.$lte !== undefined) {
        parts.push(`${c} <= ?`);
        params.push(bind(cond.$lte));
      }
      if (cond.$gt !== undefined) {
        parts.push(`${c} > ?`);
        params.push(bind(cond.$gt));
      }
      if (cond.$gte !== undefined) {
        parts.push(`${c} >= ?`);
        params.push(bind(cond.$gte));
      }
      if (cond.$exists !== undefined) parts.push(`${c} IS ${cond.$exists ? 'NOT ' : ''}NULL`);
    }
  }
  return parts.length ? parts.join(' AND ') : '1';
}

/** the text a text index keeps for a document: its indexed string fields, lowercased */
function textBody(doc: Record<string, unknown>, fields: string[]): string {
  const parts: string[] = [];
  for (const f of fields) {
    let v: unknown = doc;
    for (const k of f.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (typeof v === 'string') parts.push(v.toLowerCase());
  }
  return parts.join('\n');
}

/** a text query on a collection with a text index first scans this many rows in order (cheap for common words) */
const TEXT_WINDOW = 2000;

function isUniqueViolation(e: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY/i.test(String((e as Error)?.message));
}

/** SQL texts kept prepared per connection; `$in` lists of many lengths could grow it without a bound */
const STATEMENT_CACHE_MAX = 500;

class Statements {
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

interface Waiter {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  value: unknown;
  /** puts back what the write changed in the caller's documents, when the COMMIT fails */
  undo?: () => void;
  /**
   * The write failed (its savepoint is rolled back). It still settles after the COMMIT, so that what it
   * collided with (a key or version written earlier in the same turn) is readable when its caller looks.
   */
  failure?: { error: unknown };
}

/**
 * One pair of connections per database file per process, shared by every SqliteStore opened on it (two
 * nodes in one process, as tests run them). A second writing connection in the same thread could only
 * wait for the first one's open transaction by blocking the very event loop that would commit it.
 */
interface Connection {
  key: string | null;
  refs: number;
  db: DatabaseSync;
  rdb: DatabaseSync;
  w: Statements;
  r: Statements;
  specs: Map<string, CollectionSpec>;
  text: Map<string, string[]>;
  /** the writes of this event-loop turn, committed together by the next check phase */
  group: Waiter[] | null;
}

const OPEN = new Map<string, Connection>();

function connect(path: string, key: string | null): Connection {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = OFF;');
  // SQLite's lower() folds ASCII only; text search lowercases like JavaScript (and MongoDB's /i) do
  const lowerText = (v: SQLInputValue) => (typeof v === 'string' ? v.toLowerCase() : v);
  db.function('lower_text', { deterministic: true }, lowerText);
  db.exec('CREATE TABLE IF NOT EXISTS _counters (key TEXT PRIMARY KEY, n INTEGER NOT NULL, expires_at TEXT NOT NULL)');
  // two connections to ':memory:' would be two databases
  const rdb = path === ':memory:' ? db : new DatabaseSync(path, { readOnly: true });
  if (rdb !== db) {
    rdb.exec('PRAGMA busy_timeout = 10000;');
    rdb.function('lower_text', { deterministic: true }, lowerText);
  }
  const w = new Statements(db);
  return { key, refs: 1, db, rdb, w, r: rdb === db ? w : new Statements(rdb), specs: new Map(), text: new Map(), group: null };
}

export interface SqliteOptions {
  /** open connections of its own instead of sharing this process's (tests of several processes) */
  separate?: boolean;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private conn: Connection;
  /** the writing connection (and the reading one of an in-memory database) */
  private db: DatabaseSync;
  /** the reading connection: sees committed data only */
  private rdb: DatabaseSync;
  private w: Statements;
  private r: Statements;
  private specs: Map<string, CollectionSpec>;
  /** collections with a text index: their fields */
  private text: Map<string, string[]>;
  private closed = false;

  constructor(path: string, opts: SqliteOptions = {}) {
    const key = path === ':memory:' || opts.separate ? null : resolve(path);
    const shared = key ? OPEN.get(key) : undefined;
    if (shared) shared.refs++;
    this.conn = shared ?? connect(path, key);
    if (key && !shared) OPEN.set(key, this.conn);
    ({ db: this.db, rdb: this.rdb, w: this.w, r: this.r, specs: this.specs, text: this.text } = this.conn);
  }

  /**
   * Runs `fn` inside this turn's transaction, in a savepoint of its own; resolves with its result once the
   * transaction has committed. A throwing `fn` rolls back its savepoint only and rejects after the COMMIT.
   */
  private inGroup<T>(fn: () => T, undo?: () => void): Promise<T> {
    if (!this.conn.group) {
      this.w.get('BEGIN IMMEDIATE').run();
      this.conn.group = [];
      setImmediate(() => this.commit());
    }
    this.w.get('SAVEPOINT w').run();
    let value: T | undefined;
    let failure: { error: unknown } | undefined;
    try {
      value = fn();
      this.w.get('RELEASE w').run();
    } catch (e) {
      this.w.get('ROLLBACK TO w').run();
      this.w.get('RELEASE w').run();
      failure = { error: e };
    }
    return new Promise<T>((resolve, reject) => {
      this.conn.group!.push({ resolve: resolve as (v: unknown) => void, reject, value, undo, failure });
    });
  }

  /** Commits this turn's transaction and settles its writes. */
  private commit(): void {
    const waiters = this.conn.group;
    if (!waiters) return;
    this.conn.group = null;
    try {
      this.w.get('COMMIT').run();
    } catch (e) {
      try {
        if (this.db.isTransaction) this.w.get('ROLLBACK').run();
      } catch {
        /* already rolled back */
      }
      for (const wt of waiters) {
        wt.undo?.();
        wt.reject(wt.failure ? wt.failure.error : e);
      }
      return;
    }
    for (const wt of waiters) {
      if (wt.failure) wt.reject(wt.failure.error);
      else wt.resolve(wt.value);
    }
  }

  async ensure(specs: CollectionSpec[]): Promise<void> {
    this.commit(); // schema changes run outside the group transaction
    for (const spec of specs) {
      this.specs.set(spec.name, spec);
      const t = ident(spec.name);
      if (spec.textIndex?.length) this.ensureTextTable(spec.name, spec.textIndex);
      else this.db.exec(`CREATE TABLE IF NOT EXISTS ${t} (id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0, data TEXT NOT NULL)`);
      const indexes = [...(spec.indexes ?? [])];
      if (spec.expiresField) indexes.push({ fields: [spec.expiresField] });
      for (const ix of indexes) {
        const name = `${spec.name}__${ix.fields.join('__').replace(/\./g, '_')}${ix.unique ? '__u' : ''}`;
        this.db.exec(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${t} (${ix.fields.map(col).join(', ')})`);
      }
    }
  }

  /**
   * A collection with a text index has a stable integer row id (`rid`, which VACUUM keeps) that is the
   * rowid of its FTS5 trigram table `<name>__text`; writes keep both in one transaction.
   */
  private ensureTextTable(name: string, fields: string[]): void {
    const t = ident(name);
    const cols = this.db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as Array<{ name: string }>;
    const create = `CREATE TABLE ${t} (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, version INTEGER NOT NULL DEFAULT 0, data TEXT NOT NULL)`;
    if (cols.length === 0) this.db.exec(create);
    else if (!cols.some((c) => c.name === 'rid')) {
      // created before it had a text index: move the rows into the new shape
      const old = ident(`${name}__old`);
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.exec(
          `ALTER TABLE ${t} RENAME TO ${old}; ${create}; INSERT INTO ${t} (id, version, data) SELECT id, version, data FROM ${old}; DROP TABLE ${old};`,
        );
        this.db.exec(`DROP TABLE IF EXISTS ${ident(`${name}__text`)}`);
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
    }
    const fts = ident(`${name}__text`);
    const exists = this.db.prepare(`SELECT 1 AS x FROM sqlite_master WHERE name = ?`).get(`${name}__text`);
    if (!exists) {
      this.db.exec(`CREATE VIRTUAL TABLE ${fts} USING fts5(body, tokenize = 'trigram')`);
      const rows = this.db.prepare(`SELECT rid, data FROM ${t}`).all() as Array<{ rid: number; data: string }>;
      const ins = this.db.prepare(`INSERT INTO ${fts} (rowid, body) VALUES (?, ?)`);
      this.db.exec('BEGIN IMMEDIATE');
      try {
        for (const r of rows) ins.run(r.rid, textBody(JSON.parse(r.data), fields));
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
    }
    this.text.set(name, fields);
  }

  /** keeps the text index of a row in step with its document (inside the caller's transaction) */
  private reindex(coll: string, rid: number | bigint | undefined, doc: Record<string, unknown> | null): void {
    const fields = this.text.get(coll);
    if (!fields || rid === undefined) return;
    const fts = ident(`${coll}__text`);
    this.w.get(`DELETE FROM ${fts} WHERE rowid = ?`).run(rid);
    if (doc) this.w.get(`INSERT INTO ${fts} (rowid, body) VALUES (?, ?)`).run(rid, textBody(doc, fields));
  }

  private liveClause(coll: string, params: SQLInputValue[], now = new Date()): string {
    const f = this.specs.get(coll)?.expiresField;
    if (!f) return '1';
    params.push(now.toISOString());
    return `(${col(f)} IS NULL OR ${col(f)} > ?)`;
  }

  private parse<T>(row: { data: string; version: number } | undefined): T | null {
    if (!row) return null;
    const doc = JSON.parse(row.data);
    doc.version = Number(row.version);
    return doc as T;
  }

  async get<T extends Doc = Doc>(coll: string, id: string): Promise<T | null> {
    const params: SQLInputValue[] = [id];
    const live = this.liveClause(coll, params);
    const row = this.r.get(`SELECT data, version FROM ${ident(coll)} WHERE id = ? AND ${live}`).get(...params) as
      { data: string; version: number } | undefined;
    return this.parse<T>(row);
  }

  async findOne<T extends Doc = Doc>(coll: string, filter: Filter): Promise<T | null> {
    const [doc] = await this.find<T>(coll, filter, { limit: 1 });
    return doc ?? null;
  }

  private select(coll: string, filter: Filter, opts: FindOptions, fields: string): { sql: string; params: SQLInputValue[] } {
    const params: SQLInputValue[] = [];
    let sql = `SELECT ${fields} FROM ${ident(coll)} WHERE ${where(filter, params)} AND ${this.liveClause(coll, params)}`;
    if (opts.text && opts.text.q) {
      const pattern = `%${opts.text.q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
      sql += ` AND (${opts.text.fields.map((f) => `lower_text(${col(f)}) LIKE ? ESCAPE '\\'`).join(' OR ')})`;
      for (let i = 0; i < opts.text.fields.length; i++) params.push(pattern);
    }
    return { sql, params };
  }

  async find<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const indexed = this.text.get(coll);
    if (opts.text?.q && indexed && opts.text.fields.every((f) => indexed.includes(f))) return this.findText<T>(coll, filter, opts);
    const { sql, params } = this.select(coll, filter, opts, 'data, version');
    let full = `${sql} ORDER BY ${this.order(opts)}`;
    if (opts.limit !== undefined) {
      full += ' LIMIT ?';
      params.push(opts.limit);
    }
    const rows = this.r.get(full).all(...params) as Array<{ data: string; version: number }>;
    return rows.map((r) => this.parse<T>(r)!);
  }

  private order(opts: FindOptions): string {
    const dir = opts.desc ? 'DESC' : 'ASC';
    return opts.sort && opts.sort !== 'id' ? `${col(opts.sort)} ${dir}, id ${dir}` : `id ${dir}`;
  }

  /**
   * `find` with `text` on a text-indexed collection. The substring test itself is the same LIKE as
   * elsewhere; the index only narrows the rows it runs on. First the next TEXT_WINDOW rows in order are
   * tested (a common word fills the page there at once); when that does not fill the page, the trigram
   * index yields the candidate rows (a rare word has few).
   */
  private findText<T>(coll: string, filter: Filter, opts: FindOptions): T[] {
    const text = opts.text!;
    const order = this.order(opts);
    const q = text.q.toLowerCase();
    const pattern = `%${q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    const like = `(${text.fields.map((f) => `lower_text(${col(f)}) LIKE ? ESCAPE '\\'`).join(' OR ')})`;
    const likeParams = text.fields.map(() => pattern);
    const base: SQLInputValue[] = [];
    const cond = `${where(filter, base)} AND ${this.liveClause(coll, base)}`;
    const t = ident(coll);
    const parse = (rows: Array<{ data: string; version: number }>) => rows.map((r) => this.parse<T>(r)!);
    if (opts.limit !== undefined) {
      const windowed = this.r
        .get(
          `SELECT data, version FROM (SELECT id, data, version FROM ${t} WHERE ${cond} ORDER BY ${order} LIMIT ?) WHERE ${like} ORDER BY ${order} LIMIT ?`,
        )
        .all(...base, TEXT_WINDOW, ...likeParams, opts.limit) as Array<{ data: string; version: number }>;
      if (windowed.length >= opts.limit) return parse(windowed);
      const seen = Number(
        (this.r.get(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${t} WHERE ${cond} LIMIT ?)`).get(...base, TEXT_WINDOW) as { n: number }).n,
      );
      if (seen < TEXT_WINDOW) return parse(windowed);
    }
    const fts = ident(`${coll}__text`);
    // the trigram index answers substrings of 3 or more characters; shorter ones scan its (small) text
    const short = [...q].length < 3;
    const candidates = short ? `SELECT rowid FROM ${fts} WHERE instr(body, ?) > 0` : `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?`;
    const params: SQLInputValue[] = [...base, ...likeParams, short ? q : `"${q.replace(/"/g, '""')}"`];
    let sql = `SELECT data, version FROM ${t} WHERE ${cond} AND ${like} AND rid IN (${candidates}) ORDER BY ${order}`;
    if (opts.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(opts.limit);
    }
    return parse(this.r.get(sql).all(...params) as Array<{ data: string; version: number }>);
  }

  async count(coll: string, filter: Filter): Promise<number> {
    const { sql, params } = this.select(coll, filter, {}, 'COUNT(*) AS n');
    return Number((this.r.get(sql).get(...params) as { n: number }).n);
  }

  private applyOne(op: WriteOp, now: string): void {
    switch (op.op) {
      case 'insert': {
        const t = ident(op.coll);
        const f = this.specs.get(op.coll)?.expiresField;
        // an expired record no longer holds its key
        const texted = this.text.has(op.coll);
        if (f) {
          const gone = this.w
            .get(`DELETE FROM ${t} WHERE id = ? AND ${col(f)} <= ?${texted ? ' RETURNING rid' : ''}`)
            .all(op.doc.id, now) as Array<{ rid: number }>;
          for (const g of gone) this.reindex(op.coll, g.rid, null);
        }
        const version = op.doc.version ?? 1;
        try {
          const row = this.w
            .get(`INSERT INTO ${t} (id, version, data) VALUES (?, ?, ?)${texted ? ' RETURNING rid' : ''}`)
            .all(op.doc.id, version, JSON.stringify({ ...op.doc, version })) as Array<{ rid: number }>;
          if (texted) this.reindex(op.coll, row[0]?.rid, op.doc);
        } catch (e) {
          if (isUniqueViolation(e)) throw new DuplicateKeyError(op.coll, String((e as Error).message));
          throw e;
        }
        op.doc.version = version;
        return;
      }
      case 'cas': {
        const version = op.expected + 1;
        let changed: Array<{ rid?: number }>;
        const texted = this.text.has(op.coll);
        try {
          const stmt = this.w.get(
            `UPDATE ${ident(op.coll)} SET version = ?, data = ? WHERE id = ? AND version = ?${texted ? ' RETURNING rid' : ''}`,
          );
          const args = [version, JSON.stringify({ ...op.doc, version }), op.doc.id, op.expected] as SQLInputValue[];
          changed = texted
            ? (stmt.all(...args) as Array<{ rid: number }>)
            : Array.from({ length: Number(stmt.run(...args).changes) }, () => ({}));
        } catch (e) {
          if (isUniqueViolation(e)) throw new DuplicateKeyError(op.coll, String((e as Error).message));
          throw e;
        }
        if (changed.length !== 1) throw new VersionConflictError(op.coll, op.doc.id);
        if (texted) this.reindex(op.coll, changed[0].rid, op.doc);
        op.doc.version = version;
        return;
      }
      case 'upsert': {
        const t = ident(op.coll);
        const row = this.w.get(`SELECT version FROM ${t} WHERE id = ?`).get(op.doc.id) as { version: number } | undefined;
        const version = row ? Number(row.version) + 1 : 1;
        const texted = this.text.has(op.coll);
        try {
          const rows = this.w
            .get(
              `INSERT INTO ${t} (id, version, data) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version, data = excluded.data${texted ? ' RETURNING rid' : ''}`,
            )
            .all(op.doc.id, version, JSON.stringify({ ...op.doc, version })) as Array<{ rid: number }>;
          if (texted) this.reindex(op.coll, rows[0]?.rid, op.doc);
        } catch (e) {
          if (isUniqueViolation(e)) throw new DuplicateKeyError(op.coll, String((e as Error).message));
          throw e;
        }
        op.doc.version = version;
        return;
      }
      case 'delete': {
        const texted = this.text.has(op.coll);
        const gone = this.w.get(`DELETE FROM ${ident(op.coll)} WHERE id = ?${texted ? ' RETURNING rid' : ''}`).all(op.id) as Array<{
          rid: number;
        }>;
        for (const g of gone) this.reindex(op.coll, g.rid, null);
        return;
      }
    }
  }

  async write(ops: WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    const now = new Date().toISOString();
    const versions = ops.map((op) => (op.op === 'delete' ? undefined : op.doc.version));
    // leave callers' documents as they were when the write does not commit
    const undo = () =>
      ops.forEach((op, i) => {
        if (op.op !== 'delete') op.doc.version = versions[i];
      });
    try {
      await this.inGroup(() => {
        for (const op of ops) this.applyOne(op, now);
      }, undo);
    } catch (e) {
      undo();
      throw e;
    }
  }

  async claimDue<T extends Doc = Doc>(coll: string, opts: ClaimOptions): Promise<T[]> {
    const nowIso = opts.now.toISOString();
    const until = new Date(opts.now.getTime() + opts.leaseMs).toISOString();
    const params: SQLInputValue[] = [nowIso];
    const extra = where(opts.filter ?? {}, params);
    params.push(opts.limit);
    const dueCol = col(opts.dueField);
    return this.inGroup(() => {
      const rows = this.w
        .get(`SELECT data, version FROM ${ident(coll)} WHERE ${dueCol} <= ? AND ${extra} ORDER BY ${dueCol} LIMIT ?`)
        .all(...params) as Array<{ data: string; version: number }>;
      const out: T[] = [];
      const texted = this.text.has(coll);
      const upd = this.w.get(`UPDATE ${ident(coll)} SET version = ?, data = ? WHERE id = ?${texted ? ' RETURNING rid' : ''}`);
      for (const r of rows) {
        const doc = this.parse<T & Record<string, unknown>>(r)!;
        (doc as Record<string, unknown>)[opts.dueField] = until;
        doc.version = (doc.version ?? 0) + 1;
        const changed = upd.all(doc.version, JSON.stringify(doc), doc.id) as Array<{ rid: number }>;
        if (texted) this.reindex(coll, changed[0]?.rid, doc);
        out.push(doc);
      }
      return out;
    });
  }

  async increment(key: string, by: number, windowMs: number, now = new Date()): Promise<number> {
    const window = Math.floor(now.getTime() / windowMs);
    const expires = new Date((window + 1) * windowMs).toISOString();
    return this.inGroup(() => {
      const row = this.w
        .get('INSERT INTO _counters (key, n, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET n = n + excluded.n RETURNING n')
        .get(`${key}@${window}`, by, expires) as { n: number };
      return Number(row.n);
    });
  }

  async purgeExpired(now = new Date()): Promise<number> {
    const iso = now.toISOString();
    return this.inGroup(() => {
      let n = Number(this.w.get('DELETE FROM _counters WHERE expires_at <= ?').run(iso).changes);
      for (const spec of this.specs.values()) {
        if (!spec.expiresField) continue;
        if (this.text.has(spec.name)) {
          this.w
            .get(
              `DELETE FROM ${ident(`${spec.name}__text`)} WHERE rowid IN (SELECT rid FROM ${ident(spec.name)} WHERE ${col(spec.expiresField)} <= ?)`,
            )
            .run(iso);
        }
        n += Number(this.w.get(`DELETE FROM ${ident(spec.name)} WHERE ${col(spec.expiresField)} <= ?`).run(iso).changes);
      }
      return n;
    });
  }

  /**
   * Changes whenever another connection (another process sharing the file) has committed since the last
   * call; this node's own writes leave it as it is. Caches of stored records use it to drop what another
   * process may have changed (PRAGMA data_version on the writing connection).
   */
  externalVersion(): number {
    return Number((this.w.get('PRAGMA data_version').get() as { data_version: number }).data_version);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.commit();
    if (--this.conn.refs > 0) return;
    if (this.conn.key) OPEN.delete(this.conn.key);
    if (this.rdb !== this.db && this.rdb.isOpen) this.rdb.close();
    if (this.db.isOpen) this.db.close();
  }
}
