/** The idle release's decision (lib/runtime/memory-reducer.ts): once per burst of growth, only on an idle node. */
import fc from 'fast-check';
import { GROWN_BYTES, IDLE_UTILIZATION, IdleRelease } from '../../lib/runtime/memory-reducer.ts';

const MB = 1024 * 1024;
const idle = IDLE_UTILIZATION / 5;
const busy = 0.6;

describe('idle release of grown memory', () => {
  it('an idle node that has not grown, or a busy one however grown, never collects', () => {
    const d = new IdleRelease(130 * MB);
    for (let i = 0; i < 100; i++) expect(d.sample(idle, 130 * MB + (i % 3) * 10 * MB)).toBe(false);
    for (let i = 0; i < 100; i++) expect(d.sample(busy, (300 + i) * MB)).toBe(false);
  });

  it('after a burst, the first idle interval collects, once: RSS the collection leaves is the new floor', () => {
    const d = new IdleRelease(130 * MB);
    expect(d.sample(busy, 310 * MB)).toBe(false);
    expect(d.sample(idle, 300 * MB)).toBe(true);
    // what the collector cannot give back (the C heap's fragments) does not make it collect again
    d.released(250 * MB);
    for (let i = 0; i < 50; i++) expect(d.sample(idle, 250 * MB)).toBe(false);
    // a floor lowered by V8's own reducer counts growth from there
    expect(d.sample(idle, 160 * MB)).toBe(false);
    expect(d.sample(busy, 300 * MB)).toBe(false);
    expect(d.sample(idle, 160 * MB + GROWN_BYTES + 1)).toBe(true);
  });

  it('collects only when idle and grown above the lowest RSS since the last collection, whatever the samples', () => {
    const sample = fc.record({
      utilization: fc.double({ min: 0, max: 1, noNaN: true }),
      rss: fc.integer({ min: 50, max: 600 }).map((n) => n * MB),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 600 }),
        fc.array(sample, { maxLength: 200 }),
        fc.integer({ min: 0, max: 100 }),
        (start, samples, leftPct) => {
          const d = new IdleRelease(start * MB);
          let floor = start * MB;
          for (const s of samples) {
            floor = Math.min(floor, s.rss);
            const release = d.sample(s.utilization, s.rss);
            expect(release).toBe(s.utilization < IDLE_UTILIZATION && s.rss - floor > GROWN_BYTES);
            if (release) {
              // the collection leaves some share of the RSS it found
              floor = Math.round((s.rss * leftPct) / 100);
              d.released(floor);
            }
          }
        },
      ),
    );
  });
});
