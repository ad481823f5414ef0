/**
 * Lints openapi.json with Redocly's rules ("recommended" set, as `redocly lint` does) and checks that it
 * is in step with its fragments under openapi/. Exits 1 on any error-level problem.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { buildOpenapi, writeOpenapi } from './openapi-build.ts';

const file = resolve(process.cwd(), 'openapi.json');
const { stale } = writeOpenapi(buildOpenapi(), { check: true });
if (stale) {
  console.error('openapi.json is out of date with openapi/*.json: run npm run openapi');
  process.exit(1);
}
const config = await createConfig({
  extends: ['recommended'],
  rules: {
    // operations answer with the resource or an error envelope; 4xx are listed where they can happen
    'operation-4xx-response': 'warn',
  },
});
const problems = await lintFromString({ source: readFileSync(file, 'utf8'), absoluteRef: file, config });
const errors = problems.filter((p) => p.severity === 'error');
const warnings = problems.filter((p) => p.severity === 'warn');
for (const p of problems) {
  const where = p.location?.[0]?.pointer ?? '';
  console.log(`${p.severity.toUpperCase()} ${p.ruleId}: ${p.message} ${where}`);
}
console.log(`openapi lint: ${errors.length} errors, ${warnings.length} warnings`);
process.exit(errors.length ? 1 : 0);
