/** openapi.json is the source of truth: linted, in step with its fragments, and covering every route. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ROUTES } from '../../services/routes/index.ts';

const doc = JSON.parse(readFileSync('openapi.json', 'utf8'));

describe('openapi.json', () => {
  it('passes the Redocly linter (recommended rules) and matches openapi/*.json', () => {
    const out = execFileSync(process.execPath, ['scripts/lint-openapi.ts'], { encoding: 'utf8' });
    expect(out).toMatch(/openapi lint: 0 errors/);
  });

  it('is OpenAPI 3.1.0 with info.version 1.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0');
  });

  it('describes exactly the routes the gateway serves', () => {
    const served = new Set(ROUTES.map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`));
    served.add('get /openapi.json');
    const described = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(item))
        if (['get', 'post', 'patch', 'delete', 'put'].includes(method)) described.add(`${method} ${path}`);
    }
    expect([...described].sort()).toEqual([...served].sort());
  });

  it('names every operation once', () => {
    const ids = Object.values<Record<string, { operationId?: string }>>(doc.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
