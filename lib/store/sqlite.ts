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
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DuplicateKeyError,
  VersionConflictError,
  added,
  type ClaimOptions,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type FoundWith,
  type Lookup,
  type Store,
  type WriteOp,
} from './port.ts';
import { findWithFinds } from './lookups.ts';
import { ident, sqlite } from './sql/dialect.ts';
import { Statements, TEXT_WINDOW } from './sql/statements.ts';
import { migrate } from './sql/migrations.ts';
import { Prepared } from './sql/prepared.ts';
import { Checkpointer } from './sql/checkpointer.ts';
import { textBody } from './sql/text-body.ts';

const sql = new Statements(sqlite);
const col = (field: string) => sql.col(field);
const bindAll = (params: unknown[]) => params as SQLInputValue[];

/**
 * What applyOne runs beside an op's own SQL statement (a bit set, the one place that knows it; applyOne's
 * branches follow it): SWEEP deletes the id's expired row before an insert into a collection with an expiry
 * field; TEXT rewrites the text index row after any change in a collection with one. An op with neither is
 * one SQL statement, which SQLite undoes whole when it fails: write() then opens no savepoint.
 */
const SWEEP = 1;
const TEXT = 2;
/** the ops that may insert a row, and so sweep first (an add inserts when its row is missing) */
const INSERTS: Readonly<Record<WriteOp['op'], boolean>> = { insert: true, add: true, cas: false, upsert: false, delete: false };
/** a write of several ops: each works out its own extras */
const MANY = -1;
/** what a delete returns: a text-indexed row's rid (its text row goes too), else nothing */
const RID = ['rid'];
const NO_RID: string[] = [];

/** the `set` fields of an add op are strings in its document (what addInPlace binds) */
function setsStrings(op: Extract<WriteOp, { op: 'add' }>): boolean {
  if (op.set) for (const f of op.set) if (typeof op.doc[f] !== 'string') return false;
  return true;
}

/** SQLite's primary result code of a lock it could not take (SQLITE_BUSY_SNAPSHOT is 517: 5 in its low byte) */
const SQLITE_BUSY = 5;

function isUniqueViolation(e: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY/i.test(String((e as Error)?.message));
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
  w: Prepared;
  r: Prepared;
  specs: Map<string, CollectionSpec>;
  text: Map<string, string[]>;
  /** the writes of this event-loop turn, committed together by the next check phase */
  group: Waiter[] | null;
  /** the schema migrations have run on this connection */
  migrated: boolean;
  /** WAL checkpoints off the event loop (a file, not ':memory:') */
  checkpointer: Checkpointer | null;
  /** each collection's write and point-read statement texts, built once (see `texts`) */
  texts: Map<string, CollTexts>;
  /** the collections the open group's transaction has written (ALL: every one); empty while none is open */
  written: Set<string>;
  /** a read transaction is open on the writing connection, shared by the reads of one burst (see `shareRead`) */
  reading: boolean;
}

/** what a group marks written when a write may touch any collection */
const ALL = '*';
/** the rate counters' table (no collection reads it) */
const COUNTERS = '_counters';

/** an `add` op's UPDATE text, for one list of added fields and one of set fields */
interface AddText {
  fields: string[];
  set: readonly string[];
  text: string;
}

const NO_FIELDS: readonly string[] = [];
const sameNames = (a: readonly string[], b: readonly string[]) => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * The SQL texts one collection's writes and point reads run, built once per connection: rebuilt per call
 * (template strings, name checks) they were new strings whose hash the statement cache computed again
 * each time, several µs of a ledger transfer.
 */
interface CollTexts {
  insert: string;
  cas: string;
  upsert: string;
  /** point read: without an expiry test, or (the collection expires its documents) with `now` as its second parameter */
  get: string;
  /** the collection expires its documents: `get` takes the time as well */
  expiring: boolean;
  /** an insert that takes the place of an expired row of its id, in one statement (null: nothing expires) */
  insertOverExpired: string | null;
  /** an `add` op's UPDATE, per list of added and set fields (a few shapes: found by comparing the names) */
  adds: AddText[];
}

const OPEN = new Map<string, Connection>();

function connect(path: string, key: string | null): Connection {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = OFF;');
  // a savepoint's sub-journal (a copy of each page a write changes) in memory: in a temporary file, as this
  // build's default has it, a turn's large write spilled it and every later savepoint of the turn paid a pwrite
  // per page (and the file an open, unlink and close)
  db.exec('PRAGMA temp_store = MEMORY;');
  // SQLite's lower() folds ASCII only; text search lowercases like JavaScript (and MongoDB's /i) do
  const lowerText = (v: SQLInputValue) => (typeof v === 'string' ? v.toLowerCase() : v);
  db.function('lower_text', { deterministic: true }, lowerText);
  // an `add` op's amounts are digit strings of any size (BigInt), beyond SQLite's 64-bit integers
  db.function('dec_add', { deterministic: true }, (a: SQLInputValue, b: SQLInputValue) =>
    (BigInt((a ?? 0) as string | number | bigint) + BigInt(b as string | number | bigint)).toString(),
  );
  db.exec(sql.createCounters);
  // two connections to ':memory:' would be two databases
  const rdb = path === ':memory:' ? db : new DatabaseSync(path, { readOnly: true });
  if (rdb !== db) {
    rdb.exec('PRAGMA busy_timeout = 10000;');
    rdb.function('lower_text', { deterministic: true }, lowerText);
  }
  const w = new Prepared(db);
  return {
    key,
    refs: 1,
    db,
    rdb,
    w,
    r: rdb === db ? w : new Prepared(rdb),
    specs: new Map(),
    text: new Map(),
    group: null,
    migrated: false,
    checkpointer: path === ':memory:' ? null : new Checkpointer(db, resolve(path)),
    texts: new Map(),
    written: new Set(),
    reading: false,
  };
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
  private w: Prepared;
  private r: Prepared;
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
   * No savepoint where none is needed (one saves two statements and a copy of every page it changes):
   * - `oneStatement`: `fn` runs a single SQL statement, which SQLite already undoes whole when it fails;
   * - the turn's first write: the transaction holds nothing else yet, so should it fail, the transaction is
   *   rolled back whole and the turn's later writes begin another.
   */
  private inGroup<T>(written: string | readonly WriteOp[], fn: () => T, undo?: () => void, oneStatement = false): Promise<T> {
    const first = !this.conn.group;
    // the burst's read transaction, when one is open, becomes the turn's (its first write statement takes the
    // write lock): one transaction where the read one ended and a write one began, two lock round trips less
    const upgrading = first && this.conn.reading;
    if (first) {
      // no read transaction is open otherwise (`reading` is false): a write transaction of its own
      if (upgrading) this.conn.reading = false;
      else this.w.get('BEGIN IMMEDIATE').run();
      this.conn.group = [];
      setImmediate(() => this.commit());
    }
    // marked before it runs: a statement that fails halfway may still have changed its table in the savepoint
    if (typeof written === 'string') this.conn.written.add(written);
    else for (const op of written) this.conn.written.add(op.coll);
    let value: T | undefined;
    let failure: { error: unknown } | undefined;
    if (oneStatement || first) {
      try {
        value = upgrading ? this.upgraded(fn) : fn();
      } catch (e) {
        failure = { error: e };
        // its changes are the transaction's only ones: undone whole (the turn ends below, this write failing)
        if (!oneStatement && this.db.isTransaction) this.w.get('ROLLBACK').run();
      }
    } else {
      this.w.get('SAVEPOINT w').run();
      try {
        value = fn();
        this.w.get('RELEASE w').run();
      } catch (e) {
        if (this.db.isTransaction) {
          this.w.get('ROLLBACK TO w').run();
          this.w.get('RELEASE w').run();
        }
        failure = { error: e };
      }
    }
    const settled = new Promise<T>((resolve, reject) => {
      this.conn.group!.push({ resolve: resolve as (v: unknown) => void, reject, value, undo, failure });
    });
    // an error that made SQLite roll back the whole transaction (a full disk, an I/O error) took the turn's
    // earlier writes with it: the turn ends now and every one of them fails, so that no later write of the
    // turn runs outside a transaction and commits alone (a failed first write, rolled back above, ends it too)
    if (failure && !this.db.isTransaction) this.commit();
    return settled;
  }

  /**
   * The turn's first write inside the burst's read transaction. Its first write statement takes the write
   * lock, which SQLite refuses at once (no busy wait) when another connection holds it or has committed
   * since the read began (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT): nothing was written then, and the write runs
   * again in a transaction of its own that waits for the lock, as every turn's did.
   */
  private upgraded<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      const code = (e as { errcode?: number }).errcode;
      if (code === undefined || (code & 0xff) !== SQLITE_BUSY) throw e;
      if (this.db.isTransaction) this.w.get('ROLLBACK').run();
      this.w.get('BEGIN IMMEDIATE').run();
      return fn();
    }
  }

  /** Commits this turn's transaction and settles its writes. */
  private commit(): void {
    const waiters = this.conn.group;
    if (!waiters) return this.endRead();
    this.conn.group = null;
    this.conn.written.clear();
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
    this.conn.checkpointer?.committed();
    for (const wt of waiters) {
      if (wt.failure) wt.reject(wt.failure.error);
      else wt.resolve(wt.value);
    }
  }

  async ensure(specs: CollectionSpec[]): Promise<void> {
    this.commit(); // schema changes run outside the group transaction
    this.conn.texts.clear(); // a collection may gain a text index or an expiry field
    if (!this.conn.migrated) {
      // the write transaction is the lock: of several processes starting on one file, one migrates
      this.db.exec('BEGIN IMMEDIATE');
      try {
        await migrate(sqlite, {
          exec: (text) => this.db.exec(text),
          query: (text, params) => this.db.prepare(text).all(...bindAll(params)),
        });
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
      this.conn.migrated = true;
    }
    for (const spec of specs) {
      this.specs.set(spec.name, spec);
      if (spec.textIndex?.length) this.ensureTextTable(spec.name, spec.textIndex);
      else this.db.exec(sql.createTable(spec.name));
      for (const ddl of sql.indexes(spec)) this.db.exec(ddl);
    }
  }

  /**
   * A collection with a text index has a stable integer row id (`rid`, which VACUUM keeps) that is the
   * rowid of its FTS5 trigram table `<name>__text`; writes keep both in one transaction.
   */
  private ensureTextTable(name: string, fields: string[]): void {
    const t = ident(name);
    const cols = this.db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as Array<{ name: string }>;
    const create = sql.createTable(name, 'rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, version INTEGER NOT NULL DEFAULT 0');
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

  private expires(coll: string): string | undefined {
    return this.specs.get(coll)?.expiresField;
  }

  private texts(coll: string): CollTexts {
    let t = this.conn.texts.get(coll);
    if (!t) {
      const rid = this.text.has(coll) ? ['rid'] : [];
      t = {
        insert: sql.insert(coll, rid),
        cas: sql.cas(coll, rid),
        upsert: sql.upsert(coll, rid),
        // the text alone (its parameters are bound per read): built once, not per read with its own string to hash
        get: sql.get(coll, '', this.expires(coll), new Date(0)).sql,
        expiring: this.expires(coll) !== undefined,
        insertOverExpired: this.expires(coll) ? sql.insertOverExpired(coll, this.expires(coll)!) : null,
        adds: [],
      };
      this.conn.texts.set(coll, t);
    }
    return t;
  }

  /**
   * An `add` on a row that exists, in one UPDATE: each amount added by `dec_add` (BigInt, in this
   * process), each `set` field taken from the op's document. Returns the new version, or null when the row
   * is absent. Only string `set` values are bound this way (a text parameter is a JSON string in json_set).
   */
  private addInPlace(op: Extract<WriteOp, { op: 'add' }>): number | null {
    const fields = Object.keys(op.add);
    const set = op.set ?? NO_FIELDS;
    const texts = this.texts(op.coll);
    // no key string built per op (a new string to hash each time): the shapes are few, their names compared
    let text: string | undefined;
    for (const a of texts.adds)
      if (sameNames(a.fields, fields) && sameNames(a.set, set)) {
        text = a.text;
        break;
      }
    if (text === undefined) {
      const parts = ["'$.version', version + 1"];
      for (const f of fields) parts.push(`'$.${f}', dec_add(json_extract(data, '$.${f}'), ?)`);
      for (const f of set) parts.push(`'$.${f}', ?`);
      for (const f of [...fields, ...set]) col(f); // checks each name (a field path) before it goes into the text
      text = `UPDATE ${ident(op.coll)} SET version = version + 1, data = json_set(data, ${parts.join(', ')}) WHERE id = ? RETURNING version`;
      texts.adds.push({ fields, set: [...set], text });
    }
    const params: SQLInputValue[] = [];
    for (const f of fields) params.push(op.add[f]);
    for (const f of set) params.push(op.doc[f] as string);
    params.push(op.doc.id);
    const row = this.w.get(text).get(...params) as { version: number } | undefined;
    return row ? Number(row.version) : null;
  }

  /**
   * Where a read runs: the writing connection unless the open turn's transaction has written the
   * collection, else the reading connection. The writing connection sees committed data then: in the
   * burst's shared read transaction (`shareRead`), or in the turn's, which holds the write lock (no one else
   * has committed since it began) and has not changed this collection's tables. Its page cache survives its
   * own commits; SQLite drops a connection's whole page cache when another connection has committed since
   * its last read, so reads on the reading connection after every commit of this process paid for pages
   * read again (about a third of a ledger transfer's own cost; under load, most of each authenticated
   * request's two reads).
   */
  private reader(coll: string): Prepared {
    if (!this.db.isTransaction) return this.shareRead();
    if (this.conn.reading) return this.w;
    // a transaction that is not a turn's (a migration in ensure) may have changed anything
    if (!this.conn.group) return this.r;
    const written = this.conn.written;
    return written.has(coll) || written.has(ALL) ? this.r : this.w;
  }

  /**
   * The writing connection in a read transaction that the reads of this burst share: the reads of one event
   * loop callback and its microtasks (the requests a turn's commit wakes together), until its tick queue
   * runs. A read in a transaction of its own takes and drops its WAL read lock (two fcntl and an fstat):
   * 3.7 µs a point read against 1.5-2 µs shared. Ended before the loop's next callback, so that a request
   * that arrived after another process's commit sees it; a write of the burst carries it on as the turn's
   * transaction (`inGroup`, `upgraded`).
   */
  private shareRead(): Prepared {
    this.w.get('BEGIN').run();
    this.conn.reading = true;
    process.nextTick(() => this.endRead());
    return this.w;
  }

  private endRead(): void {
    if (!this.conn.reading) return;
    this.conn.reading = false;
    if (this.db.isTransaction && !this.conn.group) this.w.get('COMMIT').run();
  }

  private parse<T>(row: { data: string; version: number } | undefined): T | null {
    if (!row) return null;
    const doc = JSON.parse(row.data);
    doc.version = Number(row.version);
    return doc as T;
  }

  private rows<T>(coll: string, q: { sql: string; params: unknown[] }): T[] {
    const rows = this.reader(coll)
      .get(q.sql)
      .all(...bindAll(q.params)) as Array<{ data: string; version: number }>;
    return rows.map((r) => this.parse<T>(r)!);
  }

  /** the first row of a read of `coll`, on the connection `reader` picks */
  private row<R>(coll: string, q: { sql: string; params: unknown[] }): R | undefined {
    return this.reader(coll)
      .get(q.sql)
      .get(...bindAll(q.params)) as R | undefined;
  }

  async get<T extends Doc = Doc>(coll: string, id: string): Promise<T | null> {
    const t = this.texts(coll);
    const stmt = this.reader(coll).get(t.get);
    return this.parse<T>(
      (t.expiring ? stmt.get(id, new Date().toISOString()) : stmt.get(id)) as { data: string; version: number } | undefined,
    );
  }

  async findOne<T extends Doc = Doc>(coll: string, filter: Filter): Promise<T | null> {
    const [doc] = await this.find<T>(coll, filter, { limit: 1 });
    return doc ?? null;
  }

  async find<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const indexed = this.text.get(coll);
    if (opts.text?.q && indexed && opts.text.fields.every((f) => indexed.includes(f))) return this.findText<T>(coll, filter, opts);
    return this.rows<T>(coll, sql.find(coll, filter, opts, this.expires(coll)));
  }

  /**
   * `find` with `text` on a text-indexed collection. The substring test itself is the same LIKE as
   * elsewhere; the index only narrows the rows it runs on. First the next TEXT_WINDOW rows in order are
   * tested (a common word fills the page there at once); when that does not fill the page, the trigram
   * index yields the candidate rows (a rare word has few).
   */
  private findText<T>(coll: string, filter: Filter, opts: FindOptions): T[] {
    const q = opts.text!.q.toLowerCase();
    if (opts.limit !== undefined) {
      const { windowed, seen } = sql.textWindow(coll, filter, opts, this.expires(coll), TEXT_WINDOW);
      const rows = this.rows<T>(coll, windowed);
      if (rows.length >= opts.limit) return rows;
      if (Number(this.row<{ n: number }>(coll, seen)!.n) < TEXT_WINDOW) return rows;
    }
    const fts = ident(`${coll}__text`);
    // the trigram index answers substrings of 3 or more characters; shorter ones scan its (small) text
    const short = [...q].length < 3;
    const candidates = short ? `SELECT rowid FROM ${fts} WHERE instr(body, ?) > 0` : `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?`;
    return this.rows<T>(
      coll,
      sql.find(coll, filter, opts, this.expires(coll), {
        sql: `rid IN (${candidates})`,
        params: [short ? q : `"${q.replace(/"/g, '""')}"`],
      }),
    );
  }

  findWith<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions, lookups: Lookup[]): Promise<FoundWith<T>> {
    return findWithFinds<T>(this, coll, filter, opts, lookups);
  }

  async count(coll: string, filter: Filter): Promise<number> {
    const q = sql.count(coll, filter, this.expires(coll));
    return Number(this.row<{ n: number }>(coll, q)!.n);
  }

  /** runs one statement on the writing connection, a unique violation as DuplicateKeyError */
  private run<R>(coll: string, text: string, params: unknown[]): R[] {
    try {
      return this.w.get(text).all(...bindAll(params)) as R[];
    } catch (e) {
      if (isUniqueViolation(e)) throw new DuplicateKeyError(coll, String((e as Error).message));
      throw e;
    }
  }

  /** SWEEP and TEXT: what applyOne runs for `op` beside its own statement (0: nothing) */
  private extras(op: WriteOp): number {
    const text = this.text.has(op.coll) ? TEXT : 0;
    return INSERTS[op.op] && this.expires(op.coll) ? text | SWEEP : text;
  }

  private applyOne(op: WriteOp, now: string, extras = this.extras(op)): void {
    const texted = (extras & TEXT) !== 0;
    const rid = texted ? RID : NO_RID;
    switch (op.op) {
      case 'insert': {
        const version = op.doc.version ?? 1;
        // the caller's document takes its version before it is written (write() undoes it if nothing commits): no copy
        op.doc.version = version;
        if (extras === SWEEP) {
          // no text index to keep: one statement, where a DELETE of the expired row and the INSERT were two
          const rows = this.run(op.coll, this.texts(op.coll).insertOverExpired!, [op.doc.id, version, sqlite.data(op.doc), now]);
          if (rows.length !== 1) throw new DuplicateKeyError(op.coll, `Key (id)=(${op.doc.id}) already exists.`);
          return;
        }
        if (extras & SWEEP) {
          const gone = this.run<{ rid: number }>(op.coll, sql.deleteExpired(op.coll, this.expires(op.coll)!, rid), [op.doc.id, now]);
          for (const g of gone) this.reindex(op.coll, g.rid, null);
        }
        const [row] = this.run<{ rid: number }>(op.coll, this.texts(op.coll).insert, [op.doc.id, version, sqlite.data(op.doc)]);
        if (texted) this.reindex(op.coll, row?.rid, op.doc);
        return;
      }
      case 'cas': {
        const version = op.expected + 1;
        op.doc.version = version;
        const params = [version, sqlite.data(op.doc), op.doc.id, op.expected];
        let changed: Array<{ rid?: number }>;
        if (texted) changed = this.run<{ rid: number }>(op.coll, this.texts(op.coll).cas, params);
        else {
          // run() rather than all(): an UPDATE without RETURNING tells its changes
          try {
            changed = Array.from({ length: Number(this.w.get(this.texts(op.coll).cas).run(...bindAll(params)).changes) }, () => ({}));
          } catch (e) {
            if (isUniqueViolation(e)) throw new DuplicateKeyError(op.coll, String((e as Error).message));
            throw e;
          }
        }
        if (changed.length !== 1) throw new VersionConflictError(op.coll, op.doc.id);
        if (texted) this.reindex(op.coll, changed[0].rid, op.doc);
        return;
      }
      case 'upsert': {
        const [row] = this.run<{ version: number; rid?: number }>(op.coll, this.texts(op.coll).upsert, [
          op.doc.id,
          sqlite.data({ ...op.doc, version: 1 }),
        ]);
        if (texted) this.reindex(op.coll, row.rid, op.doc);
        op.doc.version = Number(row.version);
        return;
      }
      case 'add': {
        let stored: Doc | null;
        // one UPDATE, or (no row) one INSERT after it: the UPDATE changed nothing
        if (extras === 0 && setsStrings(op)) {
          // a row that exists takes the amounts in place (no read, no parse, no document rebuilt in this process)
          const version = this.addInPlace(op);
          if (version !== null) {
            op.doc.version = version;
            return;
          }
          // the UPDATE on the writing connection, in this transaction, found no row: it is inserted
          stored = null;
        } else {
          // read on the writing connection: it sees what this transaction wrote before (adds commute)
          const q = sql.get(op.coll, op.doc.id, undefined);
          stored = this.parse<Doc>(this.w.get(q.sql).get(...bindAll(q.params)) as { data: string; version: number } | undefined);
        }
        const doc = { ...added(stored, op), id: op.doc.id };
        const next: WriteOp = stored ? { op: 'cas', coll: op.coll, doc, expected: stored.version! } : { op: 'insert', coll: op.coll, doc };
        this.applyOne(next, now);
        op.doc.version = next.doc.version;
        return;
      }
      case 'delete': {
        const gone = this.run<{ rid: number }>(op.coll, sql.delete(op.coll, rid), [op.id]);
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
    // a single op's extras, worked out once: inGroup skips the savepoint when there are none
    const single = ops.length === 1 ? this.extras(ops[0]) : MANY;
    try {
      await this.inGroup(
        ops,
        () => {
          if (single !== MANY) this.applyOne(ops[0], now, single);
          else for (const op of ops) this.applyOne(op, now);
        },
        undo,
        single === 0,
      );
    } catch (e) {
      undo();
      throw e;
    }
  }

  async claimDue<T extends Doc = Doc>(coll: string, opts: ClaimOptions): Promise<T[]> {
    const until = new Date(opts.now.getTime() + opts.leaseMs);
    const q = sql.claim(coll, opts.dueField, opts.filter ?? {}, opts.now, until, opts.limit);
    // the claim changes the due field only: a text index keeps what it has
    return this.inGroup(
      coll,
      () => {
        const rows = this.w.get(q.sql).all(...bindAll(q.params)) as Array<{ data: string; version: number }>;
        return rows.map((r) => this.parse<T>(r)!);
      },
      undefined,
      true,
    );
  }

  async increment(key: string, by: number, windowMs: number, now = new Date()): Promise<number> {
    const window = Math.floor(now.getTime() / windowMs);
    const expires = new Date((window + 1) * windowMs).toISOString();
    return this.inGroup(
      COUNTERS,
      () => Number((this.w.get(sql.increment).get(`${key}@${window}`, by, expires) as { n: number }).n),
      undefined,
      true,
    );
  }

  async purgeExpired(now = new Date()): Promise<number> {
    const iso = now.toISOString();
    return this.inGroup(ALL, () => {
      let n = Number(this.w.get(sql.purgeCounters).run(iso).changes);
      for (const spec of this.specs.values()) {
        if (!spec.expiresField) continue;
        if (this.text.has(spec.name)) {
          this.w
            .get(
              `DELETE FROM ${ident(`${spec.name}__text`)} WHERE rowid IN (SELECT rid FROM ${ident(spec.name)} WHERE ${col(spec.expiresField)} <= ?)`,
            )
            .run(iso);
        }
        n += Number(this.w.get(sql.purgeExpired(spec.name, spec.expiresField)).run(iso).changes);
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
    await this.conn.checkpointer?.stop();
    if (this.rdb !== this.db && this.rdb.isOpen) this.rdb.close();
    if (this.db.isOpen) this.db.close();
  }
}
