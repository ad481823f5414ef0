/**
 * Closing a piscina pool whose workers call native addons (libsecp256k1 through the `secp256k1` package):
 * a worker terminated in the middle of such a call can make node-addon-api throw where nothing catches it,
 * which aborts the whole process. So a pool is closed, not destroyed: tasks not started yet are refused,
 * the ones running (milliseconds each) finish, then the threads exit.
 */
import type { Piscina } from 'piscina';

/** how long a close waits for running tasks before it terminates what is left */
export const POOL_CLOSE_TIMEOUT_MS = 5000;

export async function closePool(pool: Piscina): Promise<void> {
  await pool.close({ force: true });
}
