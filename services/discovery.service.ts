/** Public discovery: the rail list. */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';

export function createDiscoveryService(rt: Runtime): ServiceSchema {
  const rails = rt.config.rails.map((r) => ({ ...r, min_amount: Number(r.min_amount) }));
  return {
    name: 'discovery',
    actions: {
      paymentMethods: { visibility: 'published', handler: () => rails },
    },
  };
}
