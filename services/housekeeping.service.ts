/** Removes expired records (idempotency keys, challenges, intents, counters) on a timer; harmless on every node. */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';

const PURGE_EVERY_MS = 10 * 60_000;

export function createHousekeepingService(rt: Runtime): ServiceSchema {
  let timer: NodeJS.Timeout | null = null;
  return {
    name: 'housekeeping',
    started() {
      timer = setInterval(() => {
        rt.store.purgeExpired(rt.now()).catch((e) => this.logger.warn('purge failed:', (e as Error).message));
      }, PURGE_EVERY_MS);
      timer.unref();
    },
    stopped() {
      if (timer) clearInterval(timer);
    },
  };
}
