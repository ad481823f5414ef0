/**
 * A write set: the writes of several decisions that commit as ONE store write (an actor turn that decides
 * every message queued for it). Reads through `view` see the documents as the store will hold them after
 * the write, so each decision is made exactly as if the ones before it had been committed alone; and the
 * writes of one document fold into one op, so N spends that move one ledger account are one
 * compare-and-set of it, not N.
 *
 * `view.get` is the only read that sees pending writes; its other reads see the committed store (callers
 * that decide on `find` results are not batched). A document `view.get` read from the store is read once
 * per set (the turn's decisions see one snapshot of what they do not write: an account N spends only
 * read is one read, not N); a stale one the set then writes fails its compare-and-set, as before. An op that could not follow the pending ones (an insert
 * of a document already pending, a compare-and-set on a version it does not have) throws the store's own
 * error from `add` and leaves the set unchanged.
 */
import { DuplicateKeyError, VersionConflictError, added, type Doc, type Store, type WriteOp } from './port.ts';

interface Pending {
  op: 'insert' | 'cas' | 'upsert' | 'delete' | 'add';
  coll: string;
  id: string;
  /** the document after the write; null once deleted; for an add, the document it creates when absent */
  doc: Doc | null;
  /** cas: the stored version the write expects */
  expected?: number;
  /** the version the store will give the document (unknown after an upsert or an add) */
  version?: number;
  /** add: the amounts added and the fields taken from `doc` */
  add?: Record<string, string>;
  set?: string[];
}

/** a pending add as the op it writes */
const addOp = (p: Pending): Extract<WriteOp, { op: 'add' }> => ({
  op: 'add',
  coll: p.coll,
  doc: { ...p.doc! },
  add: { ...p.add! },
  ...(p.set ? { set: [...p.set] } : {}),
});

const keyOf = (coll: string, id: string) => `${coll}\u0000${id}`;

export class WriteSet {
  private pending = new Map<string, Pending>();
  readonly view: Store;

  constructor(store: Store) {
    const reads = new Map<string, Promise<Doc | null>>();
    /** the committed document, read once per set; a copy of its top level each time (what readers change) */
    const stored = async <T extends Doc>(coll: string, id: string): Promise<T | null> => {
      const k = keyOf(coll, id);
      let read = reads.get(k);
      if (!read) reads.set(k, (read = store.get(coll, id)));
      const doc = await read;
      return doc ? ({ ...doc } as T) : null;
    };
    const get = async <T extends Doc>(coll: string, id: string): Promise<T | null> => {
      const p = this.pending.get(keyOf(coll, id));
      if (!p) return stored<T>(coll, id);
      if (p.op === 'add') {
        // the stored document (its version too) with the pending amounts added
        const base = await stored<T>(coll, id);
        const doc = added(base, addOp(p)) as T;
        if (base?.version !== undefined) doc.version = base.version;
        return doc;
      }
      if (!p.doc) return null;
      // a copy of the top level (what readers change); the nested values are never changed in place
      const doc = { ...p.doc } as T;
      if (p.version === undefined) delete doc.version;
      else doc.version = p.version;
      return doc;
    };
    this.view = {
      kind: store.kind,
      ensure: (specs) => store.ensure(specs),
      get,
      findOne: (coll, filter) => store.findOne(coll, filter),
      find: (coll, filter, opts) => store.find(coll, filter, opts),
      findWith: (coll, filter, opts, lookups) => store.findWith(coll, filter, opts, lookups),
      count: (coll, filter) => store.count(coll, filter),
      write: () => Promise.reject(new Error('a decision must not write: return its ops')),
      claimDue: (coll, opts) => store.claimDue(coll, opts),
      increment: (key, by, windowMs, now) => store.increment(key, by, windowMs, now),
      purgeExpired: (now) => store.purgeExpired(now),
      close: () => Promise.resolve(),
    };
  }

  get size(): number {
    return this.pending.size;
  }

  /** Adds the ops of one decision after the ones already added; all or none of them. */
  add(ops: WriteOp[]): void {
    const next = new Map<string, Pending>();
    const current = (k: string) => next.get(k) ?? this.pending.get(k);
    for (const op of ops) {
      const id = op.op === 'delete' ? op.id : op.doc.id;
      const k = keyOf(op.coll, id);
      next.set(k, fold(current(k), op, id));
    }
    for (const [k, p] of next) this.pending.set(k, p);
  }

  /** The write: one op per document, in the order the documents were first written. */
  ops(): WriteOp[] {
    const out: WriteOp[] = [];
    for (const p of this.pending.values()) {
      if (p.op === 'delete') out.push({ op: 'delete', coll: p.coll, id: p.id });
      else if (p.op === 'add') out.push(addOp(p));
      else if (p.op === 'cas') out.push({ op: 'cas', coll: p.coll, doc: { ...p.doc! }, expected: p.expected! });
      else out.push({ op: p.op, coll: p.coll, doc: { ...p.doc! } });
    }
    return out;
  }
}

/** One document's pending write followed by one more op on it. */
function fold(prev: Pending | undefined, op: WriteOp, id: string): Pending {
  const { coll } = op;
  // the decision's own document (decisions do not touch what they returned), without its version
  const copy = (d: Doc) => {
    const { version: _, ...c } = d;
    return c as Doc;
  };
  if (!prev) {
    switch (op.op) {
      case 'insert': {
        // one copy with its version (an object rest without the version and a spread after it were two)
        const version = op.doc.version ?? 1;
        return { op: 'insert', coll, id, doc: { ...op.doc, version }, version };
      }
      case 'cas':
        return { op: 'cas', coll, id, doc: copy(op.doc), expected: op.expected, version: op.expected + 1 };
      case 'upsert':
        return { op: 'upsert', coll, id, doc: copy(op.doc) };
      case 'add':
        return { op: 'add', coll, id, doc: copy(op.doc), add: { ...op.add }, ...(op.set ? { set: [...op.set] } : {}) };
      case 'delete':
        return { op: 'delete', coll, id, doc: null };
    }
  }
  if (prev.op === 'add') {
    switch (op.op) {
      case 'add': {
        // the amounts add up; the fields taken on an existing document are the later op's
        const sum: Record<string, string> = { ...prev.add };
        for (const [f, v] of Object.entries(op.add)) sum[f] = (BigInt(sum[f] ?? '0') + BigInt(v)).toString();
        const set = [...new Set([...(prev.set ?? []), ...(op.set ?? [])])];
        const doc = { ...prev.doc! };
        for (const f of op.set ?? []) doc[f] = op.doc[f];
        return { ...prev, doc, add: sum, ...(set.length ? { set } : {}) };
      }
      case 'upsert':
        return { op: 'upsert', coll, id, doc: copy(op.doc) };
      default:
        // a version or an existence decided after an add is not known until the store applies it
        throw new VersionConflictError(coll, id);
    }
  }
  switch (op.op) {
    case 'insert':
      throw new DuplicateKeyError(coll, `${id} is already written in this batch`);
    case 'cas':
      if (!prev.doc || prev.version === undefined || prev.version !== op.expected) throw new VersionConflictError(coll, id);
      // folded into the first write of the document: an insert stays an insert, a cas keeps its expected
      // version (the store moves the version once, and the view shows that version)
      return { ...prev, doc: prev.op === 'insert' ? { ...copy(op.doc), version: prev.version } : copy(op.doc) };
    case 'upsert':
      if (prev.op === 'delete') return { op: 'upsert', coll, id, doc: copy(op.doc) };
      return { ...prev, doc: prev.op === 'insert' ? { ...copy(op.doc), version: prev.version } : copy(op.doc) };
    case 'add':
      // onto a document this set already holds: the amounts go into it
      if (!prev.doc) throw new VersionConflictError(coll, id);
      return { ...prev, doc: prev.op === 'insert' ? { ...added(prev.doc, op), version: prev.version } : added(prev.doc, op) };
    case 'delete':
      // an insert then a delete would hide whether the insert could have been made: not folded
      if (prev.op === 'insert') throw new VersionConflictError(coll, id);
      return { op: 'delete', coll, id, doc: null };
  }
}
