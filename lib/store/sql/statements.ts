/**
 * The SQL of the store port, written once for both SQL adapters (SQLite and PostgreSQL); what the two
 * dialects say differently comes from dialect.ts. Every collection is a table (id, version, data); every
 * statement is built here and only run by the adapters, which differ in how they run it (SQLite: one
 * synchronous connection with group commit; PostgreSQL: a pool, a transaction per write).
 */
import type { CollectionSpec, FieldCondition, Filter, FindOptions, IndexSpec, Lookup } from '../port.ts';
import { ident, type Dialect } from './dialect.ts';

export interface Query {
  sql: string;
  params: unknown[];
}

/** `%q%` for LIKE, lower-cased, with LIKE's own characters escaped */
export function likePattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
}

const ret = (cols: string[]) => (cols.length ? ` RETURNING ${cols.join(', ')}` : '');

/** rows a text search on a text-indexed collection tests in order before it asks the index */
export const TEXT_WINDOW = 2000;

/** a condition no row with the field NULL meets: a value, a comparison, a list of values, `$exists` or `$ne: null` */
function excludesNull(cond: FieldCondition | undefined): boolean {
  if (cond === undefined || cond === null) return false;
  if (typeof cond !== 'object') return true;
  return (
    (cond.$in !== undefined && cond.$in.length > 0) ||
    cond.$lt !== undefined ||
    cond.$lte !== undefined ||
    cond.$gt !== undefined ||
    cond.$gte !== undefined ||
    cond.$exists === true ||
    ('$ne' in cond && cond.$ne === null)
  );
}

export class Statements {
  readonly d: Dialect;
  constructor(dialect: Dialect) {
    this.d = dialect;
  }

  col(field: string): string {
    return this.d.field(field);
  }

  where(filter: Filter, params: unknown[]): string {
    const parts: string[] = [];
    for (const [field, cond] of Object.entries(filter)) {
      const c = this.col(field);
      const v = this.d.param(field);
      const bind = (x: unknown) => params.push(this.d.value(x, field));
      if (cond === null) parts.push(`${c} IS NULL`);
      else if (typeof cond !== 'object') {
        parts.push(`${c} = ${v}`);
        bind(cond);
      } else {
        if (cond.$in) {
          if (cond.$in.length === 0) parts.push('1 = 0');
          else {
            parts.push(`${c} IN (${cond.$in.map(() => v).join(',')})`);
            cond.$in.forEach(bind);
          }
        }
        if ('$ne' in cond) {
          if (cond.$ne === null) parts.push(`${c} IS NOT NULL`);
          else {
            parts.push(`(${c} IS NULL OR ${c} <> ${v})`);
            bind(cond.$ne);
          }
        }
        for (const [op, sql] of [
          ['$lt', '<'],
          ['$lte', '<='],
          ['$gt', '>'],
          ['$gte', '>='],
        ] as const) {
          if (cond[op] !== undefined) {
            parts.push(`${c} ${sql} ${v}`);
            bind(cond[op]);
          }
        }
        if (cond.$exists !== undefined) parts.push(`${c} IS ${cond.$exists ? 'NOT ' : ''}NULL`);
      }
    }
    return parts.length ? parts.join(' AND ') : '1 = 1';
  }

  /** documents of a collection with an expiresField count only until then */
  live(expiresField: string | undefined, params: unknown[], now: Date): string {
    if (!expiresField) return '1 = 1';
    params.push(this.d.value(now.toISOString(), expiresField));
    const c = this.col(expiresField);
    return `(${c} IS NULL OR ${c} > ${this.d.param(expiresField)})`;
  }

  order(opts: FindOptions, filter: Filter = {}): string {
    const dir = opts.desc ? 'DESC' : 'ASC';
    // SQLite puts NULLs first going up and last going down; PostgreSQL is told to do the same, unless the
    // filter leaves no NULL of the sort field to place: then its own order is the same rows in the same
    // order, and one its indexes give as they are (an index holds NULLs last going up), where the other
    // made it read and sort every row the filter matched (a busy wallet's whole history for one page)
    const nulls =
      this.d.name === 'postgres' && !(opts.sort && excludesNull(filter[opts.sort])) ? (opts.desc ? ' NULLS LAST' : ' NULLS FIRST') : '';
    return opts.sort && opts.sort !== 'id' ? `${this.col(opts.sort)} ${dir}${nulls}, id ${dir}` : `id ${dir}`;
  }

  /** the case-insensitive substring test of a text search, one LIKE per field (OR) */
  textLike(fields: string[], q: string, params: unknown[]): string {
    const pattern = likePattern(q);
    for (let i = 0; i < fields.length; i++) params.push(pattern);
    return `(${fields.map((f) => `${this.d.lower(this.d.text(f))} LIKE ? ESCAPE '\\'`).join(' OR ')})`;
  }

  /** the WHERE of a find or count: filter, liveness and (when asked) the text test */
  condition(filter: Filter, opts: FindOptions, expiresField: string | undefined, params: unknown[], now = new Date()): string {
    let sql = `${this.where(filter, params)} AND ${this.live(expiresField, params, now)}`;
    if (opts.text?.q) sql += ` AND ${this.textLike(opts.text.fields, opts.text.q, params)}`;
    return sql;
  }

  get(coll: string, id: string, expiresField: string | undefined, now = new Date()): Query {
    const params: unknown[] = [id];
    const live = this.live(expiresField, params, now);
    return { sql: `SELECT data, version FROM ${ident(coll)} WHERE id = ? AND ${live}`, params };
  }

  /** `extra` narrows the rows further (a text index's candidates), with its own params appended */
  find(coll: string, filter: Filter, opts: FindOptions, expiresField: string | undefined, extra?: Query): Query {
    const params: unknown[] = [];
    let sql = `SELECT data, version FROM ${ident(coll)} WHERE ${this.condition(filter, opts, expiresField, params)}`;
    if (extra) {
      sql += ` AND ${extra.sql}`;
      params.push(...extra.params);
    }
    sql += ` ORDER BY ${this.order(opts, filter)}`;
    if (opts.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(opts.limit);
    }
    return { sql, params };
  }

  /**
   * The first step of a text search on a text-indexed collection with a limit: the LIKE tested on the
   * next `window` rows in order only (a common word fills the page there at once, where an index of
   * trigrams would yield most of the collection to sort). `seen` counts how many rows that window had:
   * when it was full and the page was not, the adapter asks its text index for the candidates instead.
   */
  textWindow(
    coll: string,
    filter: Filter,
    opts: FindOptions,
    expiresField: string | undefined,
    window: number,
  ): { windowed: Query; seen: Query } {
    const order = this.order(opts, filter);
    const base: unknown[] = [];
    const cond = this.condition(filter, {}, expiresField, base);
    const likeParams: unknown[] = [];
    const like = this.textLike(opts.text!.fields, opts.text!.q, likeParams);
    const t = ident(coll);
    return {
      windowed: {
        sql: `SELECT data, version FROM (SELECT id, data, version FROM ${t} WHERE ${cond} ORDER BY ${order} LIMIT ?) AS w WHERE ${like} ORDER BY ${order} LIMIT ?`,
        params: [...base, window, ...likeParams, opts.limit],
      },
      seen: { sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${t} WHERE ${cond} LIMIT ?) AS w`, params: [...base, window] },
    };
  }

  /**
   * PostgreSQL's text search with a limit, in one statement (one round trip): the window of the next
   * `window` rows in order is tested first (`w`, `h`); only when it was full and did not fill the page
   * does the second branch run (its gate is a one-time filter: the executor skips the branch otherwise),
   * and there the planner, with the pattern as a constant, takes the trigram index's candidates (a rare
   * or absent word) or walks the order (a word it expects to be common). `test` is the text test (the
   * generated `text_body` column, and the per-field LIKE when that alone is not exact), on both branches.
   */
  textSearch(coll: string, filter: Filter, opts: FindOptions, expiresField: string | undefined, window: number, test: Query): Query {
    const order = this.order(opts, filter);
    const t = ident(coll);
    const base: unknown[] = [];
    const cond = this.condition(filter, {}, expiresField, base);
    const done = `SELECT (SELECT COUNT(*) FROM h) >= ? OR (SELECT COUNT(*) FROM w) < ? AS yes`;
    return {
      sql:
        `WITH w AS MATERIALIZED (SELECT id, data, version, text_body FROM ${t} WHERE ${cond} ORDER BY ${order} LIMIT ?), ` +
        `h AS MATERIALIZED (SELECT id, data, version FROM w WHERE ${test.sql} ORDER BY ${order} LIMIT ?), ` +
        `g AS MATERIALIZED (${done}) ` +
        `SELECT data, version FROM (` +
        `SELECT id, data, version FROM h WHERE (SELECT yes FROM g) UNION ALL ` +
        `SELECT id, data, version FROM (SELECT id, data, version FROM ${t} WHERE ${cond} AND ${test.sql} ORDER BY ${order} LIMIT ?) AS x ` +
        `WHERE NOT (SELECT yes FROM g)) AS u ORDER BY ${order}`,
      params: [...base, window, ...test.params, opts.limit, opts.limit, window, ...base, ...test.params, opts.limit],
    };
  }

  /**
   * The lookups of `Store.findWith` in one statement (PostgreSQL's; SQLite reads in the process and needs
   * no such thing), once the found documents are known: lookup `i`'s rows as `r<i+1>`, matched against
   * `values[i]` (the found documents' values of its `to`, as an array parameter) or against the rows of
   * an earlier lookup. Its text depends only on the lookups, not on how many values there are, so its
   * prepared plan serves every page. Rows come back as (k, id, data, version) in lookup order (k = i + 1),
   * each lookup's in id order.
   */
  lookups(lookups: Array<Lookup & { expiresField?: string }>, values: unknown[][]): Query {
    const params: unknown[] = [];
    const ctes: string[] = [];
    const parts: string[] = [];
    lookups.forEach((l, i) => {
      const cond = this.condition(l.filter ?? {}, {}, l.expiresField, params);
      let match: string;
      if (l.from === undefined) {
        match = `${this.col(l.field)} = ANY(${this.d.array(l.field)})`;
        params.push(values[i].map((v) => this.d.value(v, l.field)));
      } else {
        // the id is a text column, every other field a JSON value: each side compared in the other's terms
        const source = `r${l.from + 1}`;
        match =
          l.field === 'id'
            ? `id IN (SELECT ${l.to === 'id' ? 'id' : this.d.text(l.to)} FROM ${source})`
            : `${this.col(l.field)} IN (SELECT ${l.to === 'id' ? this.d.json('id') : this.col(l.to)} FROM ${source})`;
      }
      ctes.push(`r${i + 1} AS MATERIALIZED (SELECT id, data, version FROM ${ident(l.coll)} WHERE ${cond} AND ${match})`);
      parts.push(`SELECT ${i + 1} AS k, id, data, version FROM r${i + 1}`);
    });
    return { sql: `WITH ${ctes.join(', ')} ${parts.join(' UNION ALL ')} ORDER BY k, id`, params };
  }

  count(coll: string, filter: Filter, expiresField: string | undefined): Query {
    const params: unknown[] = [];
    return { sql: `SELECT COUNT(*) AS n FROM ${ident(coll)} WHERE ${this.condition(filter, {}, expiresField, params)}`, params };
  }

  /** the row an insert replaces when it has expired (an expired record no longer holds its key): params id, now */
  deleteExpired(coll: string, expiresField: string, returning: string[] = []): string {
    return `DELETE FROM ${ident(coll)} WHERE id = ? AND ${this.col(expiresField)} <= ${this.d.param(expiresField)}${ret(returning)}`;
  }

  /** params id, version, data */
  insert(coll: string, returning: string[] = []): string {
    return `INSERT INTO ${ident(coll)} (id, version, data) VALUES (?, ?, ${this.d.dataParam})${ret(returning)}`;
  }

  /** an insert that does nothing when the id is taken (its row count says which): params id, version, data */
  insertIfAbsent(coll: string): string {
    return `INSERT INTO ${ident(coll)} (id, version, data) VALUES (?, ?, ${this.d.dataParam}) ON CONFLICT (id) DO NOTHING`;
  }

  /**
   * An insert that replaces the row of the same id when that row has expired, in one statement (an
   * expired record no longer holds its key): params id, version, data, now. It returns no row when a
   * live row holds the id (the caller's duplicate).
   */
  insertOverExpired(coll: string, expiresField: string): string {
    const t = ident(coll);
    // the stored row's field (`excluded` has one of the same name)
    const stored = this.col(expiresField).replace('(data', `(${t}.data`);
    return (
      `INSERT INTO ${t} (id, version, data) VALUES (?, ?, ${this.d.dataParam}) ` +
      `ON CONFLICT (id) DO UPDATE SET version = excluded.version, data = excluded.data ` +
      `WHERE ${stored} <= ${this.d.param(expiresField)} RETURNING version`
    );
  }

  /** compare-and-set: params version, data, id, expected */
  cas(coll: string, returning: string[] = []): string {
    return `UPDATE ${ident(coll)} SET version = ?, data = ${this.d.dataParam} WHERE id = ? AND version = ?${ret(returning)}`;
  }

  /** insert (as version 1) or replace, the version one past the stored one: params id, data; returns the new version */
  upsert(coll: string, returning: string[] = []): string {
    const t = ident(coll);
    const next = `${t}.version + 1`;
    return (
      `INSERT INTO ${t} (id, version, data) VALUES (?, 1, ${this.d.dataParam}) ` +
      `ON CONFLICT (id) DO UPDATE SET version = ${next}, data = ${this.d.setFields('excluded.data', { version: next })}` +
      ret(['version', ...returning])
    );
  }

  /** params id */
  delete(coll: string, returning: string[] = []): string {
    return `DELETE FROM ${ident(coll)} WHERE id = ?${ret(returning)}`;
  }

  /**
   * Takes up to `limit` due rows and pushes their due time by the lease, in one statement; returns them
   * as they are after the push. PostgreSQL skips rows another claimer has locked; SQLite has one writer.
   */
  claim(coll: string, dueField: string, filter: Filter, now: Date, until: Date, limit: number): Query {
    const t = ident(coll);
    const due = this.col(dueField);
    const params: unknown[] = [until.toISOString(), this.d.value(now.toISOString(), dueField)];
    const extra = this.where(filter, params);
    params.push(limit);
    return {
      sql:
        `UPDATE ${t} SET version = version + 1, data = ${this.d.setFields('data', { [dueField]: this.d.textParam, version: 'version + 1' })} ` +
        `WHERE id IN (SELECT id FROM ${t} WHERE ${due} <= ${this.d.param(dueField)} AND ${extra} ORDER BY ${due} LIMIT ?${this.d.claimLock}) ` +
        `RETURNING data, version`,
      params,
    };
  }

  /** params key, by, expires_at; returns n */
  readonly increment =
    'INSERT INTO _counters (key, n, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET n = _counters.n + excluded.n RETURNING n';

  readonly createCounters = 'CREATE TABLE IF NOT EXISTS _counters (key TEXT PRIMARY KEY, n INTEGER NOT NULL, expires_at TEXT NOT NULL)';

  readonly purgeCounters = 'DELETE FROM _counters WHERE expires_at <= ?';

  purgeExpired(coll: string, expiresField: string): string {
    return `DELETE FROM ${ident(coll)} WHERE ${this.col(expiresField)} <= ${this.d.param(expiresField)}`;
  }

  createTable(coll: string, columns = 'id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0'): string {
    return `CREATE TABLE IF NOT EXISTS ${ident(coll)} (${columns}, data ${this.d.dataType} NOT NULL)`;
  }

  /** every index of a collection, the expiry field's included */
  indexes(spec: CollectionSpec): string[] {
    return this.namedIndexes(spec).map((ix) => ix.ddl);
  }

  /** every index of a collection with its name, so an adapter can create only the missing ones */
  namedIndexes(spec: CollectionSpec): Array<{ name: string; ddl: string }> {
    const all: IndexSpec[] = [...(spec.indexes ?? [])];
    // partial: only the rows that expire are in it (a merchant's payment session never does; migration 7)
    if (spec.expiresField) all.push({ fields: [spec.expiresField], sparse: true });
    return all.map((ix) => {
      // a sparse index has its own name (…__p), so that a store holding the full one gets it (migration 3 drops the full ones)
      const name = `${spec.name}__${ix.fields.join('__').replace(/\./g, '_')}${ix.unique ? '__u' : ''}${ix.sparse ? '__p' : ''}`;
      const cols = ix.fields.map((f) => (this.d.name === 'postgres' && f !== 'id' ? `(${this.col(f)})` : this.col(f)));
      const where = ix.sparse ? ` WHERE ${this.col(ix.fields[0])} IS NOT NULL` : '';
      return {
        name,
        ddl: `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${ident(spec.name)} (${cols.join(', ')})${where}`,
      };
    });
  }
}
