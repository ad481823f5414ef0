/**
 * Assembles openapi.json from openapi/base.json and one fragment per area (openapi/*.json, each with
 * `paths` and `components.schemas`). `--check` fails when the committed openapi.json is stale.
 */
import { buildOpenapi, writeOpenapi } from './openapi-build.ts';

const check = process.argv.includes('--check');
const { stale } = writeOpenapi(buildOpenapi(), { check });
if (check && stale) {
  console.error('openapi.json is out of date: run npm run openapi');
  process.exit(1);
}
