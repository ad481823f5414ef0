/**
 * Generates src/generated/schema.ts (the API's types) from the repository's openapi.json with
 * openapi-typescript. `--check` exits 1 when the committed file is stale (a test runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const source = new URL('../../openapi.json', import.meta.url);
const target = new URL('../src/generated/schema.ts', import.meta.url);
const HEADER = '// Generated from openapi.json by `npm run generate -w @stablecoin-payments/sdk`; do not edit.\n/* eslint-disable */\n';

const ast = await openapiTS(JSON.parse(readFileSync(source, 'utf8')));
const text = HEADER + astToString(ast);
let current = '';
try {
  current = readFileSync(target, 'utf8');
} catch { /* first run */ }
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error('sdk/src/generated/schema.ts is stale: run npm run generate -w @stablecoin-payments/sdk');
    process.exit(1);
  }
  console.log('sdk types are up to date');
} else if (current !== text) {
  writeFileSync(target, text);
  console.log('wrote sdk/src/generated/schema.ts');
}
