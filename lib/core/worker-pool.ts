/**
 * Closing a piscina pool whose workers call native addons (libsecp256k1 through the `secp256k1` package):
 * a worker terminated in the middle of such a call, or while it loads the addon, makes node-addon-api throw
 * where nothing catches it, which aborts the whole process (both reproduced: a worker terminated while
 * signing in a loop, or right after it came online; one terminated idle is safe). So a pool is closed, not
 * destroyed, once its queue is empty: piscina's close waits only for the tasks workers have taken, and a
 * task queued for a worker still starting (loading its module, the addon with it) was refused, and that
 * worker terminated mid-load. Tasks take milliseconds; `POOL_CLOSE_TIMEOUT_MS` bounds each wait.
 */
import type { Piscina } from 'piscina';

/** how long a close waits for running tasks before it terminates what is left */
export const POOL_CLOSE_TIMEOUT_MS = 5000;

/** the tasks given to each pool through `runTask` and not settled yet */
const unsettled = new WeakMap<Piscina, Set<Promise<unknown>>>();

/** `pool.run(task)`, remembered until it settles, so that a close can wait for it (`closePool`). */
export function runTask<T>(pool: Piscina, task: unknown): Promise<T> {
  const p = pool.run(task) as Promise<T>;
  let tasks = unsettled.get(pool);
  if (!tasks) unsettled.set(pool, (tasks = new Set()));
  tasks.add(p);
  const done = () => void tasks.delete(p);
  p.then(done, done);
  return p;
}

/** Closes the pool once every task given to it has settled (at most `POOL_CLOSE_TIMEOUT_MS`), then its threads exit. */
export async function closePool(pool: Piscina): Promise<void> {
  const until = Date.now() + POOL_CLOSE_TIMEOUT_MS;
  for (let tasks = unsettled.get(pool); tasks?.size && Date.now() < until;) {
    const left = until - Date.now();
    await Promise.race([Promise.allSettled([...tasks]), new Promise((r) => setTimeout(r, left).unref())]);
  }
  await pool.close({ force: false });
}
