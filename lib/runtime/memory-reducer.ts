/**
 * Gives the memory a burst of load grew back to the system once the node is idle (issue 22; docs/benchmarks.md,
 * memory).
 *
 * V8 keeps the pages its collections free in a page pool, resident, for reuse; only a collection that reduces
 * the memory footprint (its memory reducer's, or a last-resort one) hands them back. After 10,000 sessions and
 * 10,000 spends the live heap is back at ~37 MB (as after start: it does not grow with the data), but V8's
 * 256 KB pages held 157-167 MB resident in the runs that stayed at 265-285 MB RSS: its memory reducer had run
 * its cycle while the load still ran and did not start another once the node went quiet (a cycle starts after a
 * full collection, and an idle node does none). A forced ordinary full collection shrank the heap (~130 → 45 MB)
 * but not RSS (the freed pages went to the pool).
 *
 * So, every CHECK_MS, a node that was idle over the last interval and whose RSS is GROWN above the lowest it has
 * been since the last release runs one last-resort collection (V8's gc extension, reached as jest-leak-detector
 * does: exposed, a context built, unexposed), which empties the pool. It runs once per burst: the floor is then
 * the RSS after it. Its pause (a few full collections of a ~40 MB heap) lands on an idle node.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** how often the node looks whether it went idle with memory to give back */
export const CHECK_MS = 10_000;
/** an event loop busy less than this share of the last interval is idle (an idle node with its timers: < 1%) */
export const IDLE_UTILIZATION = 0.05;
/** growth of RSS above its floor worth a collection (the young generation alone swings 16 MB) */
export const GROWN_BYTES = 32 * 1024 * 1024;

/**
 * The decision, apart from the clock and the collector: feed it each interval's event-loop utilization and RSS;
 * it answers whether to release now, and after a release it is told the RSS that is left (the new floor).
 */
export class IdleRelease {
  private floor: number;
  constructor(rss: number) {
    this.floor = rss;
  }

  sample(utilization: number, rss: number): boolean {
    this.floor = Math.min(this.floor, rss);
    return utilization < IDLE_UTILIZATION && rss > this.floor + GROWN_BYTES;
  }

  released(rss: number): void {
    this.floor = rss;
  }
}

type Gc = (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
let timer: NodeJS.Timeout | undefined;

export function wakeMemoryReducer(): void {
  if (timer) return;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  setFlagsFromString('--no-expose-gc');
  const decide = new IdleRelease(process.memoryUsage.rss());
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (!decide.sample(utilization, process.memoryUsage.rss())) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    decide.released(process.memoryUsage.rss());
    // the collection's own time is not the next interval's load
    last = performance.eventLoopUtilization();
  }, CHECK_MS);
  timer.unref();
}
