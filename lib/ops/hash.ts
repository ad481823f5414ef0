/**
 * Keyed hashes for operational records (alerts, rate-limit keys): HMAC-SHA256 under a key derived from
 * the master key, truncated to 128 bits. A plain SHA-256 of an IPv4 address is reversed by trying all
 * 2^32 addresses in seconds; without the server's key nobody can.
 */
import { createHmac } from 'node:crypto';

export class KeyedHasher {
  private readonly key: Buffer;
  constructor(key: Buffer) {
    this.key = key;
  }

  /** 32 hex characters */
  hash(value: string | Buffer): string {
    return createHmac('sha256', this.key).update(value).digest('hex').slice(0, 32);
  }
}

const cache = new WeakMap<object, KeyedHasher>();

/** One hasher per keyring (every node sharing MASTER_KEY computes the same hashes). */
export function opsHasher(keyring: { derive(label: string): Buffer }): KeyedHasher {
  let h = cache.get(keyring);
  if (!h) cache.set(keyring, (h = new KeyedHasher(keyring.derive('ops-hash/v1'))));
  return h;
}
