/**
 * The request types of the contract: generated from openapi.json with the SDK's types
 * (sdk/scripts/generate-types.ts, checked fresh by a test), so a body's type is the schema `validate()`
 * checks it against and no hand-written interface can drift from it.
 */
import type { components } from '@stablecoin-payments/sdk/schema';

export type Schemas = components['schemas'];
export type SchemaName = keyof Schemas;
/** The type of a value that passed schema `N` of openapi.json. */
export type Checked<N extends SchemaName> = Schemas[N];
