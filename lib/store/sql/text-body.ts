/** What SQLite's FTS5 table of a text-indexed collection keeps for a document (lib/store/sqlite.ts). */

/** the text a text index keeps for a document: its indexed string fields, lowercased */
export function textBody(doc: Record<string, unknown>, fields: string[]): string {
  const parts: string[] = [];
  for (const f of fields) {
    let v: unknown = doc;
    for (const k of f.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (typeof v === 'string') parts.push(v.toLowerCase());
  }
  return parts.join('\n');
}
