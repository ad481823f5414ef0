/**
 * The store port: what every adapter (SQLite, PostgreSQL, MongoDB) must provide. The store is the truth;
 * in-memory actor state is only a cache of it. Documents are plain JSON objects with a string `id`
 * and an integer `version`; money and other big integers are kept as digit strings.
 */

export type Doc = { id: string; version?: number; [field: string]: unknown };

export interface IndexSpec {
  fields: string[];
  unique?: boolean;
  /**
   * Only documents whose first field is set are indexed (SQL stores: a partial index, WHERE field IS NOT
   * NULL): a field most rows leave empty costs no index write on them. Queries find rows through it by a
   * comparison on the field (=, <, <=, IN, …); a search for the empty value scans. Mongo keeps a full index.
   */
  sparse?: boolean;
}

export interface CollectionSpec {
  name: string;
  indexes?: IndexSpec[];
  /** field holding an ISO timestamp after which the document counts as absent (idempotency keys, challenges) */
  expiresField?: string;
  /**
   * string fields kept in a case-insensitive substring index, so that `find` with `text` over (a subset of)
   * these fields does not scan the collection (SQLite: an FTS5 trigram table). Results are the same with
   * or without it; only the speed differs.
   */
  textIndex?: string[];
}

/** Equality on a field, or one of a few comparison operators. Dotted paths reach nested fields. */
export type FieldCondition =
  | string
  | number
  | boolean
  | null
  | {
      $in?: Array<string | number>;
      $ne?: string | number | boolean | null;
      $lt?: string | number;
      $lte?: string | number;
      $gt?: string | number;
      $gte?: string | number;
      $exists?: boolean;
    };

export type Filter = Record<string, FieldCondition>;

export interface FindOptions {
  /** sort by this field (default id); ties are broken by id */
  sort?: string;
  desc?: boolean;
  limit?: number;
  /** case-insensitive substring search over the given fields (OR) */
  text?: { q: string; fields: string[] };
}

/**
 * Documents of another collection read together with a find's (`Store.findWith`): those of `coll` whose
 * `field` equals the `to` field of one of the source's documents, where the source is the found
 * documents or, with `from`, the documents of an earlier lookup. A nested page (products with their
 * stores, plans and prices) is then one read, one round trip on a server store.
 */
export interface Lookup {
  coll: string;
  /** the field of `coll`'s documents that is matched (`id` or a field); `filter` does not name it */
  field: string;
  /** the source's field whose values are looked up (`id` or a field) */
  to: string;
  /** the source: the index of an earlier lookup; absent, the found documents */
  from?: number;
  /** equality and comparison conditions on the looked-up documents, as `find`'s */
  filter?: Filter;
}

/** What `findWith` answers: the found documents in find's order, and per lookup its documents in id order. */
export interface FoundWith<T extends Doc = Doc> {
  docs: T[];
  related: Doc[][];
}

export type WriteOp =
  | { op: 'insert'; coll: string; doc: Doc }
  /** replace a document if its stored version equals `expected`; the new version is expected + 1 */
  | { op: 'cas'; coll: string; doc: Doc; expected: number }
  /** insert or replace unconditionally (derived records: counters, indexes of other records) */
  | { op: 'upsert'; coll: string; doc: Doc }
  /**
   * adds digit-string amounts to fields of the stored document, whatever its version (the version still
   * moves): adds commute, so concurrent adds to one document never conflict (the credit side of a busy
   * ledger account). Absent, `doc` is inserted with the amounts added to it; present, the fields named in
   * `set` are taken from `doc` as well. See `added`.
   */
  | { op: 'add'; coll: string; doc: Doc; add: Record<string, string>; set?: string[] }
  | { op: 'delete'; coll: string; id: string };

/** The document an `add` op leaves: `stored` (null when absent) with the op's amounts added, without version. */
export function added(stored: Doc | null, op: Extract<WriteOp, { op: 'add' }>): Doc {
  const doc: Doc = { ...(stored ?? op.doc) };
  for (const [field, amount] of Object.entries(op.add))
    doc[field] = (BigInt((doc[field] as string | undefined) ?? '0') + BigInt(amount)).toString();
  if (stored) for (const field of op.set ?? []) doc[field] = op.doc[field];
  delete doc.version;
  return doc;
}

/** Store races surface to clients as 409 code 5 (see lib/core/errors.ts) unless the caller handles them. */
export const STORE_CONFLICT = 'STORE_CONFLICT';

export class DuplicateKeyError extends Error {
  readonly code = 409;
  readonly type = STORE_CONFLICT;
  readonly coll: string;
  constructor(coll: string, detail = '') {
    super(`duplicate key in ${coll}${detail ? `: ${detail}` : ''}`);
    this.name = 'DuplicateKeyError';
    this.coll = coll;
  }
}

export class VersionConflictError extends Error {
  readonly code = 409;
  readonly type = STORE_CONFLICT;
  readonly coll: string;
  readonly id: string;
  constructor(coll: string, id: string) {
    super(`version conflict on ${coll}/${id}`);
    this.name = 'VersionConflictError';
    this.coll = coll;
    this.id = id;
  }
}

/**
 * The store cannot be reached (connection lost, server restarting, network cut): the operation changed
 * nothing that was not rolled back, and the client may retry (503, retryable, in the error envelope).
 */
export class StoreUnavailableError extends Error {
  readonly code = 503;
  readonly type = 'STORE_UNAVAILABLE';
  readonly retryable = true;
  /** `cause`: the driver's error, whose SQLSTATE tells a deadlock from a lost connection */
  constructor(detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = 'StoreUnavailableError';
  }
}

export interface ClaimOptions {
  /** field holding the due time as an ISO timestamp */
  dueField: string;
  /** extra equality conditions (e.g. status) */
  filter?: Filter;
  now: Date;
  /** the claimed documents' due time is pushed this far into the future, so other nodes skip them */
  leaseMs: number;
  limit: number;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres' | 'mongodb';
  /** creates collections and indexes; idempotent */
  ensure(specs: CollectionSpec[]): Promise<void>;
  get<T extends Doc = Doc>(coll: string, id: string): Promise<T | null>;
  findOne<T extends Doc = Doc>(coll: string, filter: Filter): Promise<T | null>;
  find<T extends Doc = Doc>(coll: string, filter: Filter, opts?: FindOptions): Promise<T[]>;
  /**
   * `find`, and the documents of each lookup in the same read (see Lookup): each related document once,
   * ordered by id, as a `find` of its collection with `{field: {$in: values of to}}` and its filter.
   */
  findWith<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions, lookups: Lookup[]): Promise<FoundWith<T>>;
  count(coll: string, filter: Filter): Promise<number>;
  /** all operations commit together or none does; throws DuplicateKeyError or VersionConflictError */
  write(ops: WriteOp[]): Promise<void>;
  /**
   * Atomically takes up to `limit` documents whose due time has passed and pushes their due time
   * by the lease; returns them as they were before the push (with the new version).
   */
  claimDue<T extends Doc = Doc>(coll: string, opts: ClaimOptions): Promise<T[]>;
  /** adds `by` to a named counter inside a fixed window and returns the new value (rate limits, caps) */
  increment(key: string, by: number, windowMs: number, now?: Date): Promise<number>;
  /** removes expired documents of collections with an expiresField */
  purgeExpired(now?: Date): Promise<number>;
  close(): Promise<void>;
}

export const isDuplicate = (e: unknown): e is DuplicateKeyError => e instanceof DuplicateKeyError;
export const isConflict = (e: unknown): e is VersionConflictError => e instanceof VersionConflictError;
export const isUnavailable = (e: unknown): e is StoreUnavailableError => e instanceof StoreUnavailableError;
