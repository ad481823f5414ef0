/**
 * `Store.findWith` as a sequence of `find`s: the adapters whose reads cost no round trip (SQLite, in the
 * process) or that have no single statement for it (MongoDB) answer it this way; PostgreSQL answers
 * the lookups in one statement (Statements.lookups) with the same result.
 */
import type { Doc, Filter, FindOptions, FoundWith, Lookup, Store } from './port.ts';

/** the value at a dotted path of a document */
export function valueAt(doc: Doc, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/** the distinct values of a field over documents (strings and numbers: what a lookup can match) */
export function lookupValues(docs: Doc[], path: string): Array<string | number> {
  return [
    ...new Set(docs.map((d) => valueAt(d, path)).filter((v): v is string | number => typeof v === 'string' || typeof v === 'number')),
  ];
}

export async function findWithFinds<T extends Doc = Doc>(
  store: Pick<Store, 'find'>,
  coll: string,
  filter: Filter,
  opts: FindOptions,
  lookups: Lookup[],
): Promise<FoundWith<T>> {
  const docs = await store.find<T>(coll, filter, opts);
  const related: Doc[][] = [];
  for (const l of lookups) {
    const source: Doc[] = l.from === undefined ? docs : related[l.from];
    const values = lookupValues(source, l.to);
    related.push(values.length ? await store.find(l.coll, { ...l.filter, [l.field]: { $in: values } }) : []);
  }
  return { docs, related };
}
