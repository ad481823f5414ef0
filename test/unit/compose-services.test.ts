/**
 * docker-compose.yml, checked without a Docker engine: it is valid against the Compose Specification's
 * JSON schema (vendored in test/schemas/), PostgreSQL is the default store (MongoDB only in a profile),
 * every service of the code base runs on some node, and every environment variable set on a node is one
 * the service reads.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import yaml from 'js-yaml';
import { SERVICE_FACTORIES } from '../../services/index.ts';
import { applySecretFiles, loadConfig } from '../../config/index.ts';
import { Keyring } from '../../lib/core/keyring.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';

interface ComposeService {
  build?: unknown;
  image?: string;
  profiles?: string[];
  depends_on?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
}
const compose = yaml.load(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, ComposeService> };
const nodes = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

/** every environment variable the service reads at start-up, recorded by reading through a proxy */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(t, k) {
      if (typeof k === 'string') read.add(k);
      return t[k as string];
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'compose-env-'));
  try {
    applySecretFiles(env);
    loadConfig(env);
    Keyring.load(dir, env);
    loadSeedPhrase(dir, env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return read;
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    // the schema names draft-07 by its https address, which Ajv knows as http: the same meta-schema
    const { $schema: _meta, ...schema } = JSON.parse(readFileSync('test/schemas/compose-spec.json', 'utf8'));
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // and the schema does refuse a mistake (a misspelt key on a service)
    expect(validate({ ...compose, services: { ...compose.services, nats: { ...compose.services.nats, enviroment: {} } } })).toBe(false);
  });

  it('uses PostgreSQL as the store by default and MongoDB only in its profile', () => {
    expect(compose.services.postgres.profiles).toBeUndefined();
    expect(compose.services.mongo.profiles).toEqual(['mongodb']);
    expect(compose.services['mongo-init'].profiles).toEqual(['mongodb']);
    for (const [name, s] of nodes) {
      expect([name, s.depends_on]).toEqual([name, expect.arrayContaining(['postgres', 'nats'])]);
      expect([name, s.environment?.STORE_URL_FILE]).toEqual([name, '/run/secrets/store_url']);
      expect(s.secrets).toContain('store_url');
    }
  });

  it('runs every service of the code base on some node, and names no unknown one', () => {
    const listed = new Set(nodes.flatMap(([, s]) => (s.environment?.SERVICES ?? '').split(',').filter(Boolean)));
    expect([...listed].filter((s) => !(s in SERVICE_FACTORIES))).toEqual([]);
    expect(Object.keys(SERVICE_FACTORIES).filter((s) => !listed.has(s))).toEqual([]);
  });

  it('sets on its nodes only environment variables the service reads', () => {
    const read = variablesRead();
    expect(read.has('STORE_URL')).toBe(true);
    expect(read.has('STORE_POOL_SIZE')).toBe(true);
    for (const [name, s] of nodes) {
      const unknown = Object.keys(s.environment ?? {}).filter((v) => !read.has(v));
      expect([name, unknown]).toEqual([name, []]);
    }
  });
});
