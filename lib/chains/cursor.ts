/**
 * Listener cursors: one document per scanned stream in `listener_cursors` (ethereum:<network>,
 * solana:<network>:<address>), moved only by compare-and-set under the network's lease.
 */
import type { Store } from '../store/port.ts';

export const CURSORS = 'listener_cursors';

/** Another node moved the cursor: this node lost the lease and must stop its pass. */
export class CursorLostError extends Error {
  constructor() {
    super('the cursor was moved by another node (lease lost)');
    this.name = 'CursorLostError';
  }
}

/** The Ethereum block the listener of `network` has processed up to (head − depth + 1), if any. */
export async function ethereumProcessedBlock(store: Pick<Store, 'get'>, network: string): Promise<number | undefined> {
  const cursor = await store.get<{ id: string; block: number }>(CURSORS, `ethereum:${network}`);
  return cursor && cursor.block >= 0 ? cursor.block : undefined;
}
