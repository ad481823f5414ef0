/**
 * The package's Node entry: everything of index.ts, with `register` solving the proof of work on a
 * worker thread by default.
 */
import { register as registerAnywhere, type RegisterOptions, type RegisteredMerchant } from './register.ts';
import { solvePowInWorker } from './pow-node.ts';

export * from './index.ts';
export { solvePowInWorker } from './pow-node.ts';

/** The four registration steps; the proof of work runs on a worker thread unless `solver` says otherwise. */
export function register(opts: RegisterOptions): Promise<RegisteredMerchant> {
  return registerAnywhere({ solver: solvePowInWorker, ...opts });
}
