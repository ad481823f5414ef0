/**
 * Request validation with ajv against the schemas of the committed OpenAPI description, so that the
 * contract and the checks cannot drift apart. Schemas are referenced by their components name.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { invalidFields, type FieldError } from '../core/errors.ts';
import type { Checked, SchemaName } from './contract.ts';

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction>();

export function openapiPath(): string {
  return resolve(process.env.APP_ROOT || process.cwd(), 'openapi.json');
}

function instance(): Ajv2020 {
  if (ajv) return ajv;
  const doc = JSON.parse(readFileSync(openapiPath(), 'utf8'));
  // allErrors: a client learns of every invalid field at once (bodies are bounded by BODY_LIMIT and the
  // JSON depth limit, so listing them all costs little)
  ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
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

/** At most this many invalid inputs are listed in one answer (the first ones, in schema order). */
export const MAX_LISTED_ERRORS = 20;

/** `/paymentMethod/chain` → `paymentMethod.chain`; `/items/0` → `items[0]`. */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const raw of parts) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  }
  return out;
}

/** The input an Ajv error is about: for a missing or unknown property, that property. */
function fieldOf(err: ErrorObject): string {
  if (err.keyword === 'required') return fieldPath(err.instancePath, (err.params as { missingProperty: string }).missingProperty);
  if (err.keyword === 'additionalProperties')
    return fieldPath(err.instancePath, (err.params as { additionalProperty: string }).additionalProperty);
  return fieldPath(err.instancePath);
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

/** What fixes the first schema error, in one sentence. */
function remedy(err: ErrorObject, field: string, where: string): string {
  const name = field || where;
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return `Add ${name} to the ${where}; openapi.json lists the required fields of this operation.`;
    case 'additionalProperties':
      return `Remove ${name}: this operation accepts only the fields its schema in openapi.json lists.`;
    case 'type':
      return `Send ${name} as ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}.`;
    case 'enum':
      return `Set ${name} to one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    case 'const':
      return `Set ${name} to ${JSON.stringify(p.allowedValue)}.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `Send ${name} ${String(p.comparison)} ${String(p.limit)}.`;
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
      return `Send ${name} with ${err.keyword.startsWith('min') ? 'at least' : 'at most'} ${String(p.limit)} ${/Items/.test(err.keyword) ? 'items' : /Properties/.test(err.keyword) ? 'properties' : 'characters'}.`;
    case 'format':
      return `Send ${name} as a valid ${String(p.format)}.`;
    case 'pattern':
      return `Send ${name} in the form its schema in openapi.json describes (pattern ${String(p.pattern)}).`;
    default:
      return `Correct ${name} to match its schema in openapi.json.`;
  }
}

/** The schema's verdict on `value`: every invalid input (at most MAX_LISTED_ERRORS), first one first. */
export function schemaErrors(name: string, value: unknown, where = 'body'): { errors: FieldError[]; remediation: string } | null {
  const fn = schemaValidator(name);
  if (fn(value)) return null;
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const err of fn.errors!) {
    const message = describe(err, where);
    if (seen.has(message)) continue;
    seen.add(message);
    const field = fieldOf(err);
    errors.push(field ? { field, message } : { message });
    if (errors.length === MAX_LISTED_ERRORS) break;
  }
  const first = fn.errors![0];
  return { errors, remediation: remedy(first, fieldOf(first), where) };
}

/**
 * Throws a 400 (code 3) listing every problem (the first one leads); returns the value as the schema's
 * generated type (lib/http/contract.ts): the check and the type are the same schema.
 */
export function validate<N extends SchemaName>(name: N, value: unknown, where = 'body'): Checked<N> {
  const refused = schemaErrors(name, value, where);
  if (refused) throw invalidFields(refused.errors, refused.remediation);
  return value as Checked<N>;
}
