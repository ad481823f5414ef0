/** Merges the OpenAPI fragments under openapi/ into one description (see scripts/build-openapi.ts). */
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';

type Json = Record<string, any>;

export function buildOpenapi(root = process.cwd()): Json {
  const dir = resolve(root, 'openapi');
  const base = JSON.parse(readFileSync(resolve(dir, 'base.json'), 'utf8')) as Json;
  const fragments = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'base.json')
    .sort();
  for (const file of fragments) {
    const frag = JSON.parse(readFileSync(resolve(dir, file), 'utf8')) as Json;
    for (const [path, item] of Object.entries(frag.paths ?? {})) {
      base.paths[path] = { ...(base.paths[path] ?? {}), ...(item as Json) };
    }
    for (const [kind, entries] of Object.entries(frag.components ?? {})) {
      base.components[kind] = base.components[kind] ?? {};
      for (const [name, value] of Object.entries(entries as Json)) {
        if (base.components[kind][name]) throw new Error(`${file}: components.${kind}.${name} is defined twice`);
        base.components[kind][name] = value;
      }
    }
    for (const [name, item] of Object.entries(frag.webhooks ?? {})) {
      base.webhooks = base.webhooks ?? {};
      if (base.webhooks[name]) throw new Error(`${file}: webhooks.${name} is defined twice`);
      base.webhooks[name] = item;
    }
    for (const tag of frag.tags ?? []) base.tags.push(tag);
  }
  base.paths = Object.fromEntries(Object.entries(base.paths).sort(([a], [b]) => a.localeCompare(b)));
  addGatewayResponses(base);
  return base;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/**
 * What the gateway adds to every operation, written once here rather than in each fragment: the
 * X-Request-Id header on every response (success or not) and the 500 any operation may answer.
 */
function addGatewayResponses(doc: Json): void {
  const header = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  const withHeader = (r: Json) => {
    if (r && !r.$ref) r.headers = { ...header, ...(r.headers ?? {}) };
  };
  for (const r of Object.values<Json>(doc.components.responses ?? {})) withHeader(r);
  for (const item of Object.values<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.responses['500'] ??= { $ref: '#/components/responses/InternalError' };
      for (const r of Object.values<Json>(op.responses)) withHeader(r);
    }
  }
}

export function writeOpenapi(doc: Json, { check = false, root = process.cwd() } = {}): { stale: boolean } {
  const target = resolve(root, 'openapi.json');
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const stale = !existsSync(target) || readFileSync(target, 'utf8') !== text;
  if (!check && stale) writeFileSync(target, text);
  return { stale };
}
