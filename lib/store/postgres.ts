/**
 * PostgreSQL adapter of the store port (`STORE_URL=postgres://…`), the tested store of a cluster whose
 * nodes run on several machines. node-postgres (`pg`): pure JavaScript (no addon tied to a Node ABI),
 * a pool, TLS through `sslmode` as libpq reads it, and the driver most Node services run on PostgreSQL.
 *
 * The SQL is the SQLite adapter's (sql/statements.ts); what differs is how it runs:
 * - a pool of `poolSize` connections; a write of several operations is one transaction on one
 *   connection, a write of one statement runs alone (it is atomic by itself; an insert into an expiring
 *   collection is one statement too, replacing an expired row of the same id);
 * - a text search is one statement (textSearchQuery), planned with its pattern, never a cached plan;
 * - the schema (migrations, then tables and indexes) is changed only under a transaction-scoped
 *   advisory lock, so nodes starting together change it once and never race on DDL (migrations.ts);
 * - a lost connection (server restart, network cut) marks the store unavailable: operations fail at once
 *   with a retryable 503 (StoreUnavailableError) while a probe reconnects with exponential backoff;
 *   no write is retried blindly (a COMMIT whose answer was lost may have committed: the caller retries
 *   with its idempotency key, and compare-and-set refuses a second application);
 * - time limits on every query (client and server side), so a silent network cut turns into a 503 and
 *   a transaction left open by a vanished node does not hold its row locks for long.
 */
import pg from 'pg';
import { parse as parseUrl } from 'pg-connection-string';
import {
  DuplicateKeyError,
  StoreUnavailableError,
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
import { ident, postgres } from './sql/dialect.ts';
import { likePattern, Statements, type Query } from './sql/statements.ts';
import { migrate, STORE_LOCK } from './sql/migrations.ts';
import { lookupValues } from './lookups.ts';

const sql = new Statements(postgres);

/**
 * rows a text search tests in order before the planner may take the trigram index (SQLite's is 2,000):
 * enough for a word in 1 in 25 rows to fill a page (the planner walks the order for those too, when its
 * statistics see them), few enough that a rare word pays little before the index
 */
const PG_TEXT_WINDOW = 500;

export interface PostgresOptions {
  /** connections in the pool (STORE_POOL_SIZE) */
  poolSize?: number;
  /** a query (or a COMMIT) that takes longer fails with a 503; also the server's statement_timeout */
  queryTimeoutMs?: number;
  /** where connection losses and recoveries are told (one line each) */
  log?: (line: string) => void;
  /** told false when the connection is lost and true when it is back (lib/cluster/store-fence.ts) */
  onAvailability?: (up: boolean) => void;
}

/** attempts of a schema change that met a deadlock or a lock timeout */
const SCHEMA_ATTEMPTS = 5;

/** SQLSTATEs after which the request changed nothing and may be retried */
const RETRYABLE_STATES = new Set(['40001', '40P01', '55P03', '57014', '57P01', '57P02', '57P03', '53300']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** whether an error says the server could not be reached or the connection broke (not a bad statement) */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  if (typeof err?.code === 'string' && (NETWORK_CODES.has(err.code) || err.code.startsWith('08') || RETRYABLE_STATES.has(err.code)))
    return true;
  return /Connection terminated|Query read timeout|timeout exceeded when trying to connect|not queryable|Connection ended|connect ETIMEDOUT|server closed the connection/i.test(
    String(err?.message ?? ''),
  );
}

/** the database's collation must order strings byte by byte, as SQLite and the id scheme expect */
export function collationIsBytewise(collation: string): boolean {
  return /^(C|POSIX|ucs_basic)([._-].*)?$/i.test(collation);
}

/**
 * The one statement of a text search on a collection with a text index (`indexed`, its fields): the
 * generated `text_body` column's trigram index narrows the rows; exported for the catalog benchmark's
 * EXPLAIN ANALYZE.
 */
export function textSearchQuery(coll: string, indexed: string[], filter: Filter, opts: FindOptions, expiresField?: string): Query {
  const { q, fields } = opts.text!;
  // text_body (the indexed fields, lower-cased, one per line) holds every match and is the exact test
  // when it is made of the searched fields alone and q has no line break to span two of them
  const exact = fields.length === indexed.length && !q.includes('\n');
  const params: unknown[] = [likePattern(q)];
  const test: Query = { sql: `text_body LIKE ? ESCAPE '\\'${exact ? '' : ` AND ${sql.textLike(fields, q, params)}`}`, params };
  const rest = { ...opts, text: undefined };
  return opts.limit !== undefined
    ? sql.textSearch(coll, filter, rest, expiresField, PG_TEXT_WINDOW, test)
    : sql.find(coll, filter, rest, expiresField, test);
}

interface Row {
  data: Record<string, unknown>;
  version: number;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly specs = new Map<string, CollectionSpec>();
  private readonly log: (line: string) => void;
  private readonly onAvailability: (up: boolean) => void;
  /** while set, the server is unreachable: operations fail at once and a probe reconnects */
  private down: { since: number; reason: string } | null = null;
  private probe: NodeJS.Timeout | null = null;
  private closed = false;
  /** SQL texts with a prepared-statement name (the pool's connections prepare each once) */
  private names = new Map<string, string>();

  constructor(url: string, opts: PostgresOptions = {}) {
    const timeout = opts.queryTimeoutMs ?? 10_000;
    // libpq's reading of sslmode (disable, prefer, require, verify-ca, verify-full), as operators know it
    const parsed = parseUrl(url, { useLibpqCompat: true }) as pg.PoolConfig;
    this.pool = new pg.Pool({
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: Math.min(timeout, 5000),
      query_timeout: timeout,
      statement_timeout: timeout,
      lock_timeout: Math.max(100, Math.floor(timeout / 2)),
      idle_in_transaction_session_timeout: timeout,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5000,
      application_name: 'payment-service',
      ...parsed,
    });
    this.log = opts.log ?? ((line) => console.warn(line));
    this.onAvailability = opts.onAvailability ?? (() => undefined);
    // an idle connection that breaks must not crash the process: it tells the store
    this.pool.on('error', (e) => this.lost(e));
  }

  /** Connects, runs the migrations (refusing a schema newer than this code), checks the collation. */
  async connect(): Promise<this> {
    await this.locked(async (c) => {
      const { rows } = await c.query<{ collation: string }>(
        'SELECT datcollate AS collation FROM pg_database WHERE datname = current_database()',
      );
      const collation = rows[0]?.collation ?? '';
      if (!collationIsBytewise(collation))
        throw new Error(
          `STORE_URL: the database's collation is ${collation}; the store compares text byte by byte: create it with LC_COLLATE 'C' (createdb --template=template0 --lc-collate=C …)`,
        );
      await migrate(postgres, {
        exec: (text) => c.query(text).then(() => undefined),
        query: (text, params) => c.query(postgres.numbered(text), params).then((r) => r.rows),
      });
    });
    return this;
  }

  /**
   * Runs `fn` in one transaction holding the store's advisory lock (schema changes). DDL locks tables
   * that running nodes write, so a deadlock with their transactions is possible while a node starts
   * beside them: such an attempt changed nothing and runs again.
   */
  private async locked<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transaction(async (c) => {
          await c.query('SELECT pg_advisory_xact_lock($1)', [STORE_LOCK]);
          return fn(c);
        });
      } catch (e) {
        const state = (e as { cause?: { code?: string } }).cause?.code;
        if (attempt >= SCHEMA_ATTEMPTS || !(state === '40P01' || state === '55P03')) throw e;
        await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
  }

  /**
   * Creates the tables, text columns and indexes the store lacks. What exists is read from the catalog
   * first and left alone: even `… IF NOT EXISTS` DDL takes its table's lock before it finds the work
   * done, and a node starting beside running ones must not lock the tables they write.
   */
  async ensure(specs: CollectionSpec[]): Promise<void> {
    for (const s of specs) this.specs.set(s.name, s);
    await this.locked(async (c) => {
      const { rows } = await c.query<{ relname: string; text_body: boolean }>(
        `SELECT c.relname, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'text_body' AND NOT a.attisdropped) AS text_body
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'i')`,
      );
      const have = new Map(rows.map((r) => [r.relname, r.text_body]));
      for (const spec of specs) {
        if (!have.has(spec.name))
          await c.query(sql.createTable(spec.name, 'id TEXT COLLATE "C" PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0'));
        if (spec.textIndex?.length) {
          // the text a text index searches: the indexed fields, lower-cased, one per line (pg_trgm GIN index)
          const body = spec.textIndex.map((f) => `coalesce(${postgres.text(f)}, '')`).join(` || E'\\n' || `);
          if (!have.get(spec.name))
            await c.query(
              `ALTER TABLE ${ident(spec.name)} ADD COLUMN IF NOT EXISTS text_body text GENERATED ALWAYS AS (lower(${body})) STORED`,
            );
          if (!have.has(`${spec.name}__text`))
            await c.query(
              `CREATE INDEX IF NOT EXISTS ${ident(`${spec.name}__text`)} ON ${ident(spec.name)} USING gin (text_body gin_trgm_ops)`,
            );
        }
        for (const ix of sql.namedIndexes(spec)) if (!have.has(ix.name)) await c.query(ix.ddl);
      }
    });
  }

  // ---- running statements ----

  private unavailable(): StoreUnavailableError {
    return new StoreUnavailableError(
      this.down ? `store unreachable since ${new Date(this.down.since).toISOString()}: ${this.down.reason}` : 'store closed',
    );
  }

  /** maps a driver error to the port's errors; a connection error marks the store down */
  private translate(e: unknown, coll = ''): unknown {
    if (e instanceof DuplicateKeyError || e instanceof VersionConflictError || e instanceof StoreUnavailableError) return e;
    const err = e as { code?: string; message?: string; detail?: string };
    if (err?.code === '23505') return new DuplicateKeyError(coll, err.detail ?? err.message ?? '');
    if (isConnectionError(e)) {
      if (!RETRYABLE_STATES.has(err.code ?? '') || err.code?.startsWith('57P')) this.lost(e);
      return new StoreUnavailableError(`store unavailable: ${err.message ?? err.code}`, { cause: e });
    }
    return e;
  }

  private named(text: string): pg.QueryConfig {
    let name = this.names.get(text);
    if (!name && this.names.size < 2000) {
      name = `s${this.names.size}`;
      this.names.set(text, name);
    }
    return name ? { name, text } : { text };
  }

  /** `prepared`: a named statement, whose plan the server may cache as a generic one after five runs */
  private async query<R extends pg.QueryResultRow>(
    q: Query,
    coll = '',
    client?: pg.PoolClient,
    prepared = true,
  ): Promise<pg.QueryResult<R>> {
    if (this.down || this.closed) throw this.unavailable();
    const text = postgres.numbered(q.sql);
    try {
      return await (client ?? this.pool).query<R>({ ...(prepared ? this.named(text) : { text }), values: q.params });
    } catch (e) {
      throw this.translate(e, coll);
    }
  }

  private async transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.down || this.closed) throw this.unavailable();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw this.translate(e);
    }
    let broken: unknown;
    // a checked-out connection that breaks between statements emits 'error': without a listener, a crash
    const onError = (e: Error) => {
      broken = e;
      this.lost(e);
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      const err = this.translate(e);
      if (err instanceof StoreUnavailableError) broken = e;
      else await client.query('ROLLBACK').catch((r) => (broken = r));
      throw err;
    } finally {
      client.removeListener('error', onError);
      // a connection that failed mid-transaction is thrown away, never handed to the next caller
      client.release(broken ? (broken as Error) : undefined);
    }
  }

  /** The connection is gone: fail fast from now on, and reconnect with backoff. */
  private lost(e: unknown): void {
    if (this.closed || this.down) return;
    this.down = { since: Date.now(), reason: String((e as Error)?.message ?? e).slice(0, 200) };
    this.log(`store: PostgreSQL connection lost (${this.down.reason}); requests answer 503 until it is back, reconnecting with backoff`);
    this.onAvailability(false);
    this.schedule(0);
  }

  private schedule(attempt: number): void {
    if (this.closed) return;
    // 100 ms doubling to 5 s, with jitter so that many nodes do not reconnect in step
    const delay = Math.min(5000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
    this.probe = setTimeout(async () => {
      this.probe = null;
      try {
        await this.pool.query('SELECT 1');
        const since = this.down?.since ?? Date.now();
        this.down = null;
        this.log(`store: PostgreSQL connection back after ${((Date.now() - since) / 1000).toFixed(1)} s`);
        this.onAvailability(true);
      } catch {
        this.schedule(attempt + 1);
      }
    }, delay);
    this.probe.unref();
  }

  /** whether the store answers now (for health reports) */
  get available(): boolean {
    return !this.down && !this.closed;
  }

  // ---- the port ----

  private expires(coll: string): string | undefined {
    return this.specs.get(coll)?.expiresField;
  }

  private doc<T>(r: Row): T {
    return { ...r.data, version: Number(r.version) } as T;
  }

  async get<T extends Doc = Doc>(coll: string, id: string): Promise<T | null> {
    const { rows } = await this.query<Row>(sql.get(coll, id, this.expires(coll)), coll);
    return rows[0] ? this.doc<T>(rows[0]) : null;
  }

  async findOne<T extends Doc = Doc>(coll: string, filter: Filter): Promise<T | null> {
    const [doc] = await this.find<T>(coll, filter, { limit: 1 });
    return doc ?? null;
  }

  /** a find's statement, and whether it may be prepared */
  private findQuery(coll: string, filter: Filter, opts: FindOptions): { query: Query; prepared: boolean } {
    const indexed = this.specs.get(coll)?.textIndex;
    if (opts.text?.q && indexed && opts.text.fields.every((f) => indexed.includes(f)))
      // planned with the pattern itself (no cached generic plan): a rare word must take the trigram index
      return { query: textSearchQuery(coll, indexed, filter, opts, this.expires(coll)), prepared: false };
    return { query: sql.find(coll, filter, opts, this.expires(coll)), prepared: true };
  }

  async find<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const { query, prepared } = this.findQuery(coll, filter, opts);
    const { rows } = await this.query<Row>(query, coll, undefined, prepared);
    return rows.map((r) => this.doc<T>(r));
  }

  /**
   * Two round trips whatever the lookups: the find (a text search planned with its pattern), then every
   * lookup in one prepared statement (Statements.lookups) whose cached plan costs no planning.
   */
  async findWith<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions, lookups: Lookup[]): Promise<FoundWith<T>> {
    const docs = await this.find<T>(coll, filter, opts);
    const related: Doc[][] = lookups.map(() => []);
    if (docs.length === 0 || lookups.length === 0) return { docs, related };
    const values = lookups.map((l) => (l.from === undefined ? lookupValues(docs, l.to) : []));
    const query = sql.lookups(
      lookups.map((l) => ({ ...l, expiresField: this.expires(l.coll) })),
      values,
    );
    const { rows } = await this.query<Row & { k: number }>(query, coll);
    for (const r of rows) related[r.k - 1].push(this.doc(r));
    return { docs, related };
  }

  async count(coll: string, filter: Filter): Promise<number> {
    const { rows } = await this.query<{ n: string }>(sql.count(coll, filter, this.expires(coll)), coll);
    return Number(rows[0].n);
  }

  private async applyOne(op: WriteOp, now: string, c?: pg.PoolClient): Promise<void> {
    switch (op.op) {
      case 'insert': {
        const f = this.expires(op.coll);
        const version = op.doc.version ?? 1;
        const params = [op.doc.id, version, postgres.data({ ...op.doc, version })];
        if (f) {
          // one round trip where a DELETE of the expired row and the INSERT would be a transaction of four
          const res = await this.query({ sql: sql.insertOverExpired(op.coll, f), params: [...params, postgres.value(now, f)] }, op.coll, c);
          if (res.rowCount !== 1) throw new DuplicateKeyError(op.coll, `Key (id)=(${op.doc.id}) already exists.`);
        } else await this.query({ sql: sql.insert(op.coll), params }, op.coll, c);
        op.doc.version = version;
        return;
      }
      case 'cas': {
        const version = op.expected + 1;
        const res = await this.query(
          { sql: sql.cas(op.coll), params: [version, postgres.data({ ...op.doc, version }), op.doc.id, op.expected] },
          op.coll,
          c,
        );
        if (res.rowCount !== 1) throw new VersionConflictError(op.coll, op.doc.id);
        op.doc.version = version;
        return;
      }
      case 'upsert': {
        const { rows } = await this.query<{ version: number }>(
          { sql: sql.upsert(op.coll), params: [op.doc.id, postgres.data({ ...op.doc, version: 1 })] },
          op.coll,
          c,
        );
        op.doc.version = Number(rows[0].version);
        return;
      }
      case 'add': {
        // the row stays locked until the transaction ends: a concurrent add waits, then adds to this one's
        const q = sql.get(op.coll, op.doc.id, undefined);
        const locked = async () => {
          const { rows } = await this.query<Row>({ sql: `${q.sql} FOR UPDATE`, params: q.params }, op.coll, c);
          return rows[0] ? this.doc<Doc>(rows[0]) : null;
        };
        let stored = await locked();
        if (!stored) {
          // an absent row locks nothing: of two first adds at once the insert decides, without a unique
          // violation (that would abort the transaction); the one whose insert found the row taken waits for
          // the other's commit, then adds onto that row
          const first = { ...added(null, op), id: op.doc.id, version: 1 };
          const f = this.expires(op.coll);
          const params = [first.id, 1, postgres.data(first)];
          const res = f
            ? await this.query({ sql: sql.insertOverExpired(op.coll, f), params: [...params, postgres.value(now, f)] }, op.coll, c)
            : await this.query({ sql: sql.insertIfAbsent(op.coll), params }, op.coll, c);
          if (res.rowCount === 1) {
            op.doc.version = 1;
            return;
          }
          stored = await locked();
          if (!stored) throw new VersionConflictError(op.coll, op.doc.id);
        }
        const doc = { ...added(stored, op), id: op.doc.id };
        const next: WriteOp = { op: 'cas', coll: op.coll, doc, expected: stored.version! };
        await this.applyOne(next, now, c);
        op.doc.version = next.doc.version;
        return;
      }
      case 'delete':
        await this.query({ sql: sql.delete(op.coll), params: [op.id] }, op.coll, c);
        return;
    }
  }

  async write(ops: WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    const now = new Date().toISOString();
    const versions = ops.map((op) => (op.op === 'delete' ? undefined : op.doc.version));
    try {
      // one statement is atomic by itself (an insert into an expiring collection too); an add reads first
      const single = ops.length === 1 && ops[0].op !== 'add';
      if (single) await this.applyOne(ops[0], now);
      else
        await this.transaction(async (c) => {
          for (const op of ops) await this.applyOne(op, now, c);
        });
    } catch (e) {
      // leave callers' documents as they were when the write does not commit
      ops.forEach((op, i) => {
        if (op.op !== 'delete') op.doc.version = versions[i];
      });
      throw e;
    }
  }

  async claimDue<T extends Doc = Doc>(coll: string, opts: ClaimOptions): Promise<T[]> {
    const until = new Date(opts.now.getTime() + opts.leaseMs);
    const { rows } = await this.query<Row>(sql.claim(coll, opts.dueField, opts.filter ?? {}, opts.now, until, opts.limit), coll);
    return rows.map((r) => this.doc<T>(r));
  }

  async increment(key: string, by: number, windowMs: number, now = new Date()): Promise<number> {
    const window = Math.floor(now.getTime() / windowMs);
    const expires = new Date((window + 1) * windowMs).toISOString();
    const { rows } = await this.query<{ n: number }>({ sql: sql.increment, params: [`${key}@${window}`, by, expires] });
    return Number(rows[0].n);
  }

  async purgeExpired(now = new Date()): Promise<number> {
    const iso = now.toISOString();
    let n = (await this.query({ sql: sql.purgeCounters, params: [iso] })).rowCount ?? 0;
    for (const spec of this.specs.values()) {
      if (spec.expiresField)
        n +=
          (await this.query({ sql: sql.purgeExpired(spec.name, spec.expiresField), params: [postgres.value(iso, spec.expiresField)] }))
            .rowCount ?? 0;
    }
    return n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probe) clearTimeout(this.probe);
    await this.pool.end();
  }
}
