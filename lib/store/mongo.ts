/**
 * MongoDB adapter of the store port, the shared store of a cluster. Kept thin: documented driver calls
 * only (insertOne, replaceOne with a version filter, findOneAndUpdate, transactions on a replica set).
 * Its contract suite runs when MONGO_URL is set (see README).
 */
import { MongoClient, MongoServerError, type Db, type ClientSession, type Document } from 'mongodb';
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

function mongoField(f: string): string {
  return f === 'id' ? '_id' : f;
}

function toMongoFilter(filter: Filter): Document {
  const out: Document = {};
  for (const [field, cond] of Object.entries(filter)) {
    const f = mongoField(field);
    if (cond === null || typeof cond !== 'object') {
      out[f] = cond;
      continue;
    }
    const c: Document = {};
    if (cond.$in) c.$in = cond.$in;
    if ('$ne' in cond) c.$ne = cond.$ne;
    for (const k of ['$lt', '$lte', '$gt', '$gte'] as const) if (cond[k] !== undefined) c[k] = cond[k];
    // as in SQLite (json_extract gives NULL for both), a field holding null counts as absent
    if (cond.$exists === true) c.$nin = [null];
    if (cond.$exists === false) c.$not = { $ne: null };
    out[f] = c;
  }
  return out;
}

function fromMongo<T>(d: Document | null): T | null {
  if (!d) return null;
  const { _id, ...rest } = d;
  return { id: _id, ...rest } as T;
}

function toMongo(doc: Doc): Document {
  const { id, ...rest } = doc;
  return { _id: id, ...rest };
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class MongoStore implements Store {
  readonly kind = 'mongodb' as const;
  private client: MongoClient;
  private db!: Db;
  private specs = new Map<string, CollectionSpec>();

  constructor(url: string) {
    this.client = new MongoClient(url);
  }

  async connect(): Promise<this> {
    await this.client.connect();
    this.db = this.client.db();
    return this;
  }

  async ensure(specs: CollectionSpec[]): Promise<void> {
    for (const spec of specs) {
      this.specs.set(spec.name, spec);
      const c = this.db.collection(spec.name);
      for (const ix of spec.indexes ?? []) {
        const keys = Object.fromEntries(ix.fields.map((f) => [mongoField(f), 1]));
        // a unique index ignores documents without the field, as SQLite's does for NULL
        const partial = ix.unique
          ? { partialFilterExpression: Object.fromEntries(ix.fields.map((f) => [mongoField(f), { $exists: true }])) }
          : {};
        await c.createIndex(keys, { unique: !!ix.unique, ...partial });
      }
      if (spec.expiresField) await c.createIndex({ [spec.expiresField]: 1 });
      // spec.textIndex needs nothing here: `find` answers `text` with a case-insensitive regex over the
      // fields (the same results as SQLite's trigram index), bounded by the indexes of the filter
    }
    await this.db.collection('_counters').createIndex({ expires_at: 1 });
  }

  private live(coll: string, filter: Document, now = new Date()): Document {
    const f = this.specs.get(coll)?.expiresField;
    if (!f) return filter;
    return { $and: [filter, { $or: [{ [f]: null }, { [f]: { $gt: now.toISOString() } }] }] };
  }

  async get<T extends Doc = Doc>(coll: string, id: string): Promise<T | null> {
    return fromMongo<T>(await this.db.collection(coll).findOne(this.live(coll, { _id: id as never })));
  }

  async findOne<T extends Doc = Doc>(coll: string, filter: Filter): Promise<T | null> {
    const [d] = await this.find<T>(coll, filter, { limit: 1 });
    return d ?? null;
  }

  private query(coll: string, filter: Filter, opts: FindOptions): Document {
    let q = toMongoFilter(filter);
    if (opts.text && opts.text.q) {
      const re = new RegExp(escapeRegex(opts.text.q), 'i');
      q = { $and: [q, { $or: opts.text.fields.map((f) => ({ [f]: re })) }] };
    }
    return this.live(coll, q);
  }

  async find<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const dir = opts.desc ? -1 : 1;
    const sort: Document = opts.sort && opts.sort !== 'id' ? { [opts.sort]: dir, _id: dir } : { _id: dir };
    let cursor = this.db
      .collection(coll)
      .find(this.query(coll, filter, opts))
      .sort(sort);
    if (opts.limit !== undefined) cursor = cursor.limit(opts.limit);
    return (await cursor.toArray()).map((d) => fromMongo<T>(d)!);
  }

  /** a sequence of finds: they cost no round trip here */
  findWith<T extends Doc = Doc>(coll: string, filter: Filter, opts: FindOptions, lookups: Lookup[]): Promise<FoundWith<T>> {
    return findWithFinds<T>(this, coll, filter, opts, lookups);
  }

  async count(coll: string, filter: Filter): Promise<number> {
    return this.db.collection(coll).countDocuments(this.query(coll, filter, {}));
  }

  private async applyOne(op: WriteOp, session: ClientSession | undefined, now: string): Promise<void> {
    try {
      switch (op.op) {
        case 'insert': {
          const f = this.specs.get(op.coll)?.expiresField;
          if (f) await this.db.collection(op.coll).deleteOne({ _id: op.doc.id as never, [f]: { $lte: now } }, { session });
          const version = op.doc.version ?? 1;
          await this.db.collection(op.coll).insertOne(toMongo({ ...op.doc, version }), { session });
          op.doc.version = version;
          return;
        }
        case 'cas': {
          const version = op.expected + 1;
          const res = await this.db
            .collection(op.coll)
            .replaceOne({ _id: op.doc.id as never, version: op.expected }, toMongo({ ...op.doc, version }), { session });
          if (res.matchedCount !== 1) throw new VersionConflictError(op.coll, op.doc.id);
          op.doc.version = version;
          return;
        }
        case 'upsert': {
          const prev = await this.db.collection(op.coll).findOne({ _id: op.doc.id as never }, { session, projection: { version: 1 } });
          const version = prev ? Number(prev.version ?? 0) + 1 : 1;
          await this.db
            .collection(op.coll)
            .replaceOne({ _id: op.doc.id as never }, toMongo({ ...op.doc, version }), { session, upsert: true });
          op.doc.version = version;
          return;
        }
        case 'add': {
          // read and replaced on its version: a concurrent add is a conflict here (the caller decides
          // again), not a wait as on the SQL stores
          const stored = fromMongo<Doc>(await this.db.collection(op.coll).findOne({ _id: op.doc.id as never }, { session }));
          const doc = { ...added(stored, op), id: op.doc.id };
          const next: WriteOp = stored
            ? { op: 'cas', coll: op.coll, doc, expected: stored.version! }
            : { op: 'insert', coll: op.coll, doc };
          await this.applyOne(next, session, now);
          op.doc.version = next.doc.version;
          return;
        }
        case 'delete':
          await this.db.collection(op.coll).deleteOne({ _id: op.id as never }, { session });
          return;
      }
    } catch (e) {
      if (e instanceof MongoServerError && e.code === 11000) throw new DuplicateKeyError(op.coll, e.message);
      throw e;
    }
  }

  async write(ops: WriteOp[]): Promise<void> {
    const now = new Date().toISOString();
    if (ops.length === 1) return this.applyOne(ops[0], undefined, now);
    const session = this.client.startSession();
    try {
      await session.withTransaction(async () => {
        for (const op of ops) await this.applyOne(op, session, now);
      });
    } finally {
      await session.endSession();
    }
  }

  async claimDue<T extends Doc = Doc>(coll: string, opts: ClaimOptions): Promise<T[]> {
    const until = new Date(opts.now.getTime() + opts.leaseMs).toISOString();
    const out: T[] = [];
    const filter = { ...toMongoFilter(opts.filter ?? {}), [opts.dueField]: { $lte: opts.now.toISOString() } };
    while (out.length < opts.limit) {
      const d = await this.db
        .collection(coll)
        .findOneAndUpdate(
          filter,
          { $set: { [opts.dueField]: until }, $inc: { version: 1 } },
          { sort: { [opts.dueField]: 1 }, returnDocument: 'after' },
        );
      if (!d) break;
      out.push(fromMongo<T>(d)!);
    }
    return out;
  }

  async increment(key: string, by: number, windowMs: number, now = new Date()): Promise<number> {
    const window = Math.floor(now.getTime() / windowMs);
    const d = await this.db
      .collection('_counters')
      .findOneAndUpdate(
        { _id: `${key}@${window}` as never },
        { $inc: { n: by }, $setOnInsert: { expires_at: new Date((window + 1) * windowMs).toISOString() } },
        { upsert: true, returnDocument: 'after' },
      );
    return Number(d?.n ?? by);
  }

  async purgeExpired(now = new Date()): Promise<number> {
    const iso = now.toISOString();
    let n = (await this.db.collection('_counters').deleteMany({ expires_at: { $lte: iso } })).deletedCount;
    for (const spec of this.specs.values()) {
      if (spec.expiresField) n += (await this.db.collection(spec.name).deleteMany({ [spec.expiresField]: { $lte: iso } })).deletedCount;
    }
    return n;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
