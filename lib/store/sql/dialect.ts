/**
 * Everything the two SQL adapters say differently, in one place (DESIGN.md: the two SQL adapters share
 * their statements). `statements.ts` builds every SQL text once, for either dialect, from these pieces:
 *
 * | what                  | SQLite (node:sqlite)               | PostgreSQL (pg)                                   |
 * |-----------------------|------------------------------------|---------------------------------------------------|
 * | document column       | `data TEXT` (JSON text)            | `data jsonb`                                      |
 * | a field of it         | `json_extract(data, '$.a.b')`      | `nullif(data #> '{a,b}', 'null')` (jsonb)         |
 * | a value compared      | bound as is (booleans as 0/1)      | bound as JSON text, cast `::jsonb`                |
 * | set fields of data    | `json_set(data, '$.f', ?)`         | `jsonb_set(data, '{f}', to_jsonb(?::text))`       |
 * | placeholders          | `?`                                | `$1, $2, …` (the `?` of the shared text numbered)  |
 * | lower-case text       | `lower_text()` (JavaScript's, registered) | `lower()`                                  |
 * | claim lock            | none (one writer: BEGIN IMMEDIATE) | `FOR UPDATE SKIP LOCKED`                          |
 * | migration lock        | the write transaction              | `pg_advisory_xact_lock`                           |
 * | text index            | FTS5 trigram side table (`rid`)    | generated `text_body` column + pg_trgm GIN index  |
 *
 * A JSON null and a missing field are the same (SQL NULL) in both, so that `{f: null}`, `$exists` and
 * unique indexes treat them alike. jsonb compares numbers as numbers and strings byte by byte in a
 * database whose collation is C (the PostgreSQL adapter checks it), which is what json_extract does.
 */
import type { SQLInputValue } from 'node:sqlite';

export type DialectName = 'sqlite' | 'postgres';

export interface Dialect {
  readonly name: DialectName;
  /** the SQL expression of a document field; the same text in indexes and queries, so the planner uses them */
  field(path: string): string;
  /** the placeholder of a value compared with a field */
  param(field: string): string;
  /** binds a value compared with a field */
  value(v: unknown, field?: string): unknown;
  /** the placeholder of a text value written into a document (setFields) */
  readonly textParam: string;
  /** the placeholder of a whole document */
  readonly dataParam: string;
  /** binds a whole document */
  data(doc: object): unknown;
  /** `data` with the top-level fields set to the given SQL expressions (each a number or a text) */
  setFields(data: string, fields: Record<string, string>): string;
  /** the placeholder of an array of values compared with a field (`= ANY(…)`); PostgreSQL only */
  array(field: string): string;
  /** a text column as the JSON value fields are compared as */
  json(column: string): string;
  /** lowers a text expression the way JavaScript's toLowerCase does (text search) */
  lower(expr: string): string;
  /** text of a field, for text search */
  text(path: string): string;
  /** appended to the claim's inner SELECT */
  readonly claimLock: string;
  /** the column types of a collection's table */
  readonly dataType: string;
  /** numbers `?` placeholders for the driver (outside quoted literals) */
  numbered(sql: string): string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function ident(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid collection name ${name}`);
  return `"${name}"`;
}

function checkPath(path: string): string {
  if (!PATH.test(path)) throw new Error(`invalid field ${path}`);
  return path;
}

export const sqlite: Dialect = {
  name: 'sqlite',
  field: (path) => (path === 'id' ? 'id' : `json_extract(data, '$.${checkPath(path)}')`),
  param: () => '?',
  textParam: '?',
  value(v): SQLInputValue {
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v === undefined) return null;
    return v as SQLInputValue;
  },
  dataParam: '?',
  data: (doc) => JSON.stringify(doc),
  setFields: (data, fields) =>
    `json_set(${data}, ${Object.entries(fields)
      .map(([k, v]) => `'$.${checkPath(k)}', ${v}`)
      .join(', ')})`,
  array: () => {
    throw new Error('SQLite binds no arrays');
  },
  json: (column) => column,
  lower: (expr) => `lower_text(${expr})`,
  text: (path) => sqlite.field(path),
  claimLock: '',
  dataType: 'TEXT',
  numbered: (sql) => sql,
};

const pgPath = (path: string) => `'{${checkPath(path).split('.').join(',')}}'`;

export const postgres: Dialect = {
  name: 'postgres',
  field(path) {
    if (path === 'id') return 'id';
    const parts = checkPath(path).split('.');
    const raw = parts.length === 1 ? `data -> '${parts[0]}'` : `data #> ${pgPath(path)}`;
    return `nullif(${raw}, 'null'::jsonb)`;
  },
  // the id is a text column; every other field is jsonb
  param: (field) => (field === 'id' ? '?' : '?::jsonb'),
  textParam: '?::text',
  value: (v, field) => (v === undefined || v === null ? null : field === 'id' ? String(v) : JSON.stringify(v)),
  dataParam: '?::jsonb',
  data: (doc) => JSON.stringify(doc),
  setFields: (data, fields) => Object.entries(fields).reduce((acc, [k, v]) => `jsonb_set(${acc}, ${pgPath(k)}, to_jsonb(${v}))`, data),
  array: (field) => (field === 'id' ? '?::text[]' : '?::jsonb[]'),
  json: (column) => `to_jsonb(${column})`,
  lower: (expr) => `lower(${expr})`,
  text(path) {
    if (path === 'id') return 'id';
    const parts = checkPath(path).split('.');
    return parts.length === 1 ? `(data ->> '${parts[0]}')` : `(data #>> ${pgPath(path)})`;
  },
  claimLock: ' FOR UPDATE SKIP LOCKED',
  dataType: 'jsonb',
  numbered(sql) {
    let n = 0;
    let out = '';
    let quoted = false;
    for (const ch of sql) {
      if (ch === "'") quoted = !quoted;
      out += ch === '?' && !quoted ? `$${++n}` : ch;
    }
    return out;
  },
};
