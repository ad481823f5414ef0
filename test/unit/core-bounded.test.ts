/** trimOldest: a bounded Map's oldest droppable entries go in one batch once it is past its bound. */
import fc from 'fast-check';
import { trimOldest } from '../../lib/core/bounded.ts';

describe('trimOldest', () => {
  it('leaves a Map within its bound as it is', () => {
    const m = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    trimOldest(m, 2);
    expect([...m.keys()]).toEqual(['a', 'b']);
  });

  it('past the bound, drops the oldest down to the bound less a 64th of it', () => {
    const m = new Map(Array.from({ length: 129 }, (_, i) => [i, i] as const));
    trimOldest(m, 128);
    expect(m.size).toBe(126);
    expect([...m.keys()].slice(0, 2)).toEqual([3, 4]);
  });

  it('keeps what may not be dropped, in order, and drops only the oldest droppable ones (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (pinned, max) => {
        const m = new Map(pinned.map((p, i) => [i, p] as const));
        const before = [...m.keys()];
        trimOldest(m, max, (p) => !p);
        const after = [...m.keys()];
        const dropped = before.filter((k) => !m.has(k));
        // order kept; nothing pinned dropped
        expect(after).toEqual(before.filter((k) => m.has(k)));
        expect(dropped.every((k) => !pinned[k])).toBe(true);
        if (before.length <= max) expect(dropped).toEqual([]);
        else {
          const target = max - Math.floor(max / 64);
          const droppable = before.filter((k) => !pinned[k]);
          // the oldest droppable ones, as many as it takes to reach the target (all of them if too few)
          expect(dropped).toEqual(droppable.slice(0, Math.min(droppable.length, before.length - target)));
        }
      }),
    );
  });
});
