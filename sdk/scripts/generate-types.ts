/**
 * Generates src/generated/schema.ts (the API's types) from the repository's openapi.json with
 * openapi-typescript. `--check` exits 1 when the committed file is stale (a test runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const source = new URL('../../openapi.json', import.meta.url);
const target = new URL('../src/generated/schema.ts', import.meta.url);
const HEADER = '// Generated from openapi.json by `npm run generate -w @stablecoin-payments/sdk`; do not edit.\n/* eslint-disable */\n';

const spec = JSON.parse(readFileSync(source, 'utf8'));
// emptyObjectsUnknown: a free-form object such as metadata is Record<string, unknown>, not Record<string, never>
const ast = await openapiTS(spec, { emptyObjectsUnknown: true });

/** the operations that declare an Idempotency-Key header: the client adds one to each call */
const idempotent: string[] = [];
for (const [path, item] of Object.entries<Record<string, { parameters?: Array<{ in: string; name: string }> }>>(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (op?.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'))
      idempotent.push(`${method.toUpperCase()} ${path}`);
  }
}
const outputs: Array<[URL, string]> = [
  [target, HEADER + astToString(ast)],
  [
    new URL('../src/generated/idempotent.ts', import.meta.url),
    `${HEADER}/** Operations that take an Idempotency-Key header (METHOD path). */\nexport const IDEMPOTENT_OPERATIONS: readonly string[] = ${JSON.stringify(idempotent.sort(), null, 2).replace(/"/g, "'")};\n`,
  ],
];

let stale = false;
for (const [file, text] of outputs) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    /* first run */
  }
  if (current === text) continue;
  stale = true;
  if (!process.argv.includes('--check')) {
    writeFileSync(file, text);
    console.log(`wrote ${file.pathname}`);
  }
}
if (process.argv.includes('--check')) {
  if (stale) {
    console.error('sdk/src/generated is stale: run npm run generate -w @stablecoin-payments/sdk');
    process.exit(1);
  }
  console.log('sdk types are up to date');
}
