/**
 * Cursor paging of every list endpoint: `{data, has_more, next_cursor}`, newest first, the cursor opaque
 * to clients (the id of the last row of the previous page), `limit` 1 to 100 (default 20).
 */
import { invalidCursor, invalidLimit } from './errors.ts';
import type { Doc, Filter, Store } from '../store/port.ts';

/** Paging cursor: opaque to clients, the id of the last row of the previous page. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`c1:${lastId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^c1:([a-z]{2,8}_[0-9a-z]{26})$/.exec(text);
  return m ? m[1] : null;
}

export const LIMIT_DEFAULT = 20;
export const LIMIT_MAX = 100;

/** `limit` query value → number, or an error message. */
export function parseLimit(raw: string | undefined): number | string {
  if (raw === undefined) return LIMIT_DEFAULT;
  if (!/^\d{1,4}$/.test(raw)) return `limit must be an integer from 1 to ${LIMIT_MAX}`;
  const n = Number(raw);
  if (n < 1 || n > LIMIT_MAX) return `limit must be an integer from 1 to ${LIMIT_MAX}`;
  return n;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}
export interface PageQuery {
  cursor?: string;
  limit?: string;
}

export function limitOf(q: PageQuery): number {
  const limit = parseLimit(q.limit);
  if (typeof limit === 'string') throw invalidLimit(limit);
  return limit;
}

/** Rows of a collection with prefixed, time-sortable ids (wal_…, po_…), newest first. */
export async function pageById<D extends Doc, T>(
  store: Store,
  coll: string,
  filter: Filter,
  q: PageQuery,
  present: (d: D) => T | Promise<T>,
): Promise<Page<T>> {
  const limit = limitOf(q);
  const f: Filter = { ...filter };
  if (q.cursor !== undefined) {
    const after = decodeCursor(q.cursor);
    if (!after) throw invalidCursor();
    f.id = { $lt: after };
  }
  const rows = await store.find<D>(coll, f, { desc: true, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { data: await Promise.all(page.map(present)), has_more: more, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
}
