/** The piscina pool that renders receipts (workers/render-receipt.ts), plus the ETag of the bytes. */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { Piscina } from 'piscina';
import type { ReceiptData } from './model.ts';

export class ReceiptWorkers {
  private pool: Piscina;

  constructor(root = process.env.APP_ROOT || process.cwd(), maxThreads = Math.max(1, availableParallelism() - 1)) {
    this.pool = new Piscina({
      filename: resolve(root, 'workers/render-receipt.ts'),
      minThreads: 0,
      // leave one core to the event loop
      maxThreads,
      idleTimeout: 60_000,
    });
  }

  async render(data: ReceiptData): Promise<Buffer> {
    const bytes = (await this.pool.run(data)) as Uint8Array;
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** A strong ETag: the sha256 of the PDF bytes (quoted, as HTTP wants). */
export const etagOf = (pdf: Buffer) => `"${createHash('sha256').update(pdf).digest('hex')}"`;

/** If-None-Match matches when it lists the ETag (weak or strong form) or is `*`. */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');
}
