/**
 * Secrets the service must read back (webhook signing secrets) are sealed at rest with AES-256-GCM
 * under the master key: MASTER_KEY (64 hex chars; the same on every node of a cluster), or, in the
 * embedded default, a key created on first start in DATA_DIR/master.key.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

export class Keyring {
  private key: Buffer;
  constructor(key: Buffer) {
    this.key = key;
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
  }

  /** The master key the service would use (MASTER_KEY, else DATA_DIR/master.key), without creating one; null when there is none. */
  static existing(dataDir: string, env: Record<string, string | undefined> = process.env): Keyring | null {
    return env.MASTER_KEY || existsSync(resolve(dataDir, 'master.key')) ? Keyring.load(dataDir, env) : null;
  }

  static load(dataDir: string, env: Record<string, string | undefined> = process.env): Keyring {
    if (env.MASTER_KEY) {
      if (!/^[0-9a-fA-F]{64}$/.test(env.MASTER_KEY)) throw new Error('MASTER_KEY must be 64 hex characters');
      return new Keyring(Buffer.from(env.MASTER_KEY, 'hex'));
    }
    const file = resolve(dataDir, 'master.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      try {
        writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // another process made it first
      }
    }
    return new Keyring(Buffer.from(readFileSync(file, 'utf8').trim(), 'hex'));
  }

  /** A 32-byte key for one purpose, derived from the master key (HKDF-SHA256); `salt` binds it further. */
  derive(purpose: string, salt: string | Buffer = ''): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, salt, `payments:${purpose}`, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return `v1.${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url')}`;
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed.replace(/^v1\./, ''), 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}

/** Seals with a key derived from a caller's secret (idempotent replays of one-time credentials). */
export function sealWith(secret: Buffer, plaintext: string): string {
  return new Keyring(secret).seal(plaintext);
}
export function openWith(secret: Buffer, sealed: string): string {
  return new Keyring(secret).open(sealed);
}
