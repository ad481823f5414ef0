/**
 * Closing a piscina pool whose workers call native addons (libsecp256k1 through the `secp256k1` package):
 * a worker terminated in the middle of such a call, or while it loads the addon, makes node-addon-api throw
 * where nothing catches it, which aborts the whole process (both reproduced: a worker terminated while
 * signing in a loop, or right after it came online; one terminated idle is safe). So a pool is closed, not
 * destroyed, and only once every task given to it has settled and every thread has loaded its module:
 * piscina's close waits only for the tasks workers have taken, so a task queued for a worker still starting
 * (loading its module, the addon with it) was refused, and that worker terminated mid-load. Tasks take
 * milliseconds; `POOL_CLOSE_TIMEOUT_MS` bounds the wait.
 */
import type { Piscina } from 'piscina';

/** how long a close waits for running tasks before it terminates what is left */
export const POOL_CLOSE_TIMEOUT_MS = 5000;

/** what a close waits for: the tasks given to the pool and not settled yet, and the threads that have loaded their module */
interface Watched {
  tasks: Set<Promise<unknown>>;
  ready: Set<number>;
}
const watched = new WeakMap<Piscina, Watched>();

function watch(pool: Piscina): Watched {
  let w = watched.get(pool);
  if (!w) {
    const ready = new Set<number>();
    watched.set(pool, (w = { tasks: new Set(), ready }));
    // piscina tells a worker created after its start once it has loaded its module (and so the addon); these
    // pools start no thread before their first task (minThreads 0), which is when this begins listening
    pool.on('workerCreate', (worker: { id: number }) => ready.add(worker.id));
    pool.on('workerDestroy', (worker: { id: number }) => ready.delete(worker.id));
  }
  return w;
}

/** `pool.run(task)`, remembered until it settles, so that a close can wait for it (`closePool`). */
export function runTask<T>(pool: Piscina, task: unknown): Promise<T> {
  const { tasks } = watch(pool);
  const p = pool.run(task) as Promise<T>;
  tasks.add(p);
  const done = () => void tasks.delete(p);
  p.then(done, done);
  return p;
}

/** nothing is left to wait for: every task given has settled, and every thread has loaded its module */
const settled = (pool: Piscina, w: Watched) => w.tasks.size === 0 && pool.threads.every((t) => w.ready.has(t.threadId));

/**
 * Closes the pool once every task given to it has settled and every thread it started has loaded its
 * module (a second thread may still start after the first took the tasks), at most `POOL_CLOSE_TIMEOUT_MS`;
 * then its threads exit.
 */
export async function closePool(pool: Piscina): Promise<void> {
  const w = watch(pool);
  const until = Date.now() + POOL_CLOSE_TIMEOUT_MS;
  while (!settled(pool, w) && Date.now() < until) {
    // a pause, not a spin: a thread tells it is ready through the event loop
    const pause = new Promise((r) => setTimeout(r, 5));
    await (w.tasks.size ? Promise.race([Promise.allSettled([...w.tasks]), pause]) : pause);
  }
  await pool.close({ force: false });
}
