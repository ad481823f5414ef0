/**
 * Lets V8's memory reducer run in this process (issue 22; docs/benchmarks.md, memory).
 *
 * The memory reducer is V8's idle-time collector: once the mutator is quiet it runs compacting collections
 * that shrink the young generation and give the pages of a grown old generation, and V8's pool of freed
 * pages, back to the system. In a plain `node index.ts` it was never seen to run (bench:memory: the young
 * generation stayed at 16 MB idle, and after 10,000 sessions and 10,000 spends RSS stayed at its ~275 MB
 * peak with ~50 MB of live heap). With a second context that has V8's `gc` extension installed (made the
 * way jest-leak-detector does: expose it, build a context, unexpose it) it ran in every measured run (RSS
 * back to 164-178 MB in 6 of 7; in one, freed pages stayed resident longer), and after a load it did not
 * with a plain throwaway context. Nothing calls the function: the context is kept, not used.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let kept: unknown;

export function wakeMemoryReducer(): void {
  if (kept) return;
  setFlagsFromString('--expose-gc');
  kept = runInNewContext('gc');
  setFlagsFromString('--no-expose-gc');
}
