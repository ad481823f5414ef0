/**
 * Trims an insertion-ordered Map kept under a bound: past `max` entries, its oldest droppable ones go, down
 * to `max` less a 64th of it, in one pass. In a batch because a Map keeps its deleted entries' holes until
 * it rehashes, and every walk from its start (`keys().next()` included) skips them all: one entry dropped
 * per insert cost ~5 µs an insert at 10,000 entries, against 0.2 µs in batches.
 */
export function trimOldest<K, V>(m: Map<K, V>, max: number, droppable: (v: V) => boolean = () => true): void {
  if (m.size <= max) return;
  const target = max - Math.floor(max / 64);
  for (const [k, v] of m) {
    if (m.size <= target) break;
    if (droppable(v)) m.delete(k);
  }
}
