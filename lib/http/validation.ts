/**
 * Request validation with ajv against the schemas of the committed OpenAPI description, so that the
 * contract and the checks cannot drift apart. Schemas are referenced by their components name.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { badRequest } from '../core/errors.ts';

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction>();

export function openapiPath(): string {
  return resolve(process.env.APP_ROOT || process.cwd(), 'openapi.json');
}

function instance(): Ajv2020 {
  if (ajv) return ajv;
  const doc = JSON.parse(readFileSync(openapiPath(), 'utf8'));
  ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: doc.components ?? {} });
  return ajv;
}

export function schemaValidator(name: string): ValidateFunction {
  let fn = compiled.get(name);
  if (!fn) {
    fn = instance().getSchema(`openapi.json#/components/schemas/${name}`);
    if (!fn) throw new Error(`schema ${name} is not in openapi.json`);
    compiled.set(name, fn);
  }
  return fn;
}

function describe(err: ErrorObject, where: string): string {
  const path = `${where}${err.instancePath.replace(/\//g, '.')}`;
  switch (err.keyword) {
    case 'additionalProperties':
      return `unknown field '${(err.params as { additionalProperty: string }).additionalProperty}' in ${path}: no other properties are allowed`;
    case 'required':
      return `${path}.${(err.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${path} must be of type ${(err.params as { type: string }).type}`;
    case 'enum':
      return `${path} must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${path} ${err.message ?? 'is invalid'}`;
  }
}

/** Throws a 400 (code 3) naming the first problem; returns the value typed. */
export function validate<T>(name: string, value: unknown, where = 'body'): T {
  const fn = schemaValidator(name);
  if (!fn(value)) throw badRequest(describe(fn.errors![0], where));
  return value as T;
}
