/**
 * Secrets at rest and in the image: the data directory is private to the service's user, secrets can
 * come from files (Docker secrets), and the image build context carries no secret and runs as non-root.
 */
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applySecretFiles } from '../../config/index.ts';
import { ensureDataDir } from '../../lib/core/data-dir.ts';
import { clusterKeyFrom, commandOf, openPacket, sealPacket } from '../../lib/cluster/sealed-transport.ts';
import { randomBytes } from 'node:crypto';

describe('secrets at rest', () => {
  const base = mkdtempSync(join(tmpdir(), 'secrets-at-rest-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('creates the data directory 0700 and the SQLite file 0600 (and narrows an existing directory)', () => {
    const dir = join(base, 'data');
    ensureDataDir({ dataDir: dir, storeUrl: `sqlite:${join(dir, 'service.db')}` });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'service.db')).mode & 0o777).toBe(0o600);
    const loose = join(base, 'loose');
    ensureDataDir({ dataDir: loose, storeUrl: 'mongodb://x' });
    chmodSync(loose, 0o755);
    ensureDataDir({ dataDir: loose, storeUrl: 'mongodb://x' });
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });

  it('reads NAME_FILE for secret variables, without overriding a value that is set', () => {
    const file = join(base, 'master_key');
    writeFileSync(file, `${'ab'.repeat(32)}\n`);
    const env: Record<string, string | undefined> = { MASTER_KEY_FILE: file, CLUSTER_SECRET: 'set', CLUSTER_SECRET_FILE: file };
    applySecretFiles(env);
    expect(env.MASTER_KEY).toBe('ab'.repeat(32));
    expect(env.CLUSTER_SECRET).toBe('set');
  });

  it('keeps .env, data and node_modules out of the image and runs it as a non-root user', () => {
    const ignore = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['.env', '.env*', 'data/', 'node_modules/', 'test/']) expect(ignore).toContain(entry);
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).not.toMatch(/MASTER_KEY=|SEED_MNEMONIC=/);
  });
});

describe('sealed cluster transport', () => {
  it('opens only packets sealed with the same key, on the same command', () => {
    const key = clusterKeyFrom('s3cret');
    const data = Buffer.from('{"action":"session-actors.send"}');
    const sealed = sealPacket(key, commandOf('MOL-ns.REQB.session-actors.send'), data);
    expect(openPacket(key, commandOf('.REQ'), sealed)?.toString()).toBe(data.toString());
    expect(openPacket(randomBytes(32), 'REQ', sealed)).toBeNull();
    expect(openPacket(key, 'EVENT', sealed)).toBeNull();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(openPacket(key, 'REQ', tampered)).toBeNull();
    expect(openPacket(key, 'REQ', data)).toBeNull();
  });
});
