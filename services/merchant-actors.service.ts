/** Hosts the merchant actors (actors/merchant.ts). */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { merchantBehavior } from '../actors/merchant.ts';

export function createMerchantActorsService(rt: Runtime): ServiceSchema {
  return { name: 'merchant-actors', mixins: [actorHostMixin(rt, merchantBehavior)] } as ServiceSchema;
}
