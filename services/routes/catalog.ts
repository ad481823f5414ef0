/** REST routes of the catalog area: the merchant side (X-API-Key or bearer) and the buyer side (no credentials). */
import type { RouteDef } from './types.ts';

const RESOURCES = [
  { path: '/v1/stores', name: 'Store', id: ':store_id' },
  { path: '/v1/products', name: 'Product', id: ':product_id' },
  { path: '/v1/plans', name: 'Plan', id: ':plan_id' },
  { path: '/v1/prices', name: 'Price', id: ':price_id' },
];

export const CATALOG_ROUTES: RouteDef[] = [
  ...RESOURCES.flatMap(({ path, name, id }): RouteDef[] => [
    { method: 'POST', path, action: `catalog.create${name}`, auth: 'key-or-bearer' },
    { method: 'GET', path, action: `catalog.list${name}s`, auth: 'key-or-bearer' },
    { method: 'GET', path: `${path}/${id}`, action: `catalog.get${name}`, auth: 'key-or-bearer' },
    { method: 'PATCH', path: `${path}/${id}`, action: `catalog.update${name}`, auth: 'key-or-bearer' },
    { method: 'DELETE', path: `${path}/${id}`, action: `catalog.delete${name}`, auth: 'key-or-bearer' },
    { method: 'POST', path: `${path}/${id}/publish`, action: `catalog.publish${name}`, auth: 'key-or-bearer' },
    { method: 'POST', path: `${path}/${id}/archive`, action: `catalog.archive${name}`, auth: 'key-or-bearer' },
  ]),
  { method: 'GET', path: '/v1/catalog/products', action: 'catalog.discoverProducts', auth: 'none' },
  { method: 'GET', path: '/v1/catalog/products/:product_id', action: 'catalog.discoverProduct', auth: 'none' },
  { method: 'POST', path: '/v1/catalog/prices/:price_id/checkout-intent', action: 'catalog.createCheckoutIntent', auth: 'none' },
];
