/**
 * Listener cursors: one document per scanned stream in `listener_cursors` (ethereum:<network>,
 * solana:<network>:<address>), moved only by compare-and-set under the network's lease.
 */
export const CURSORS = 'listener_cursors';

/** Another node moved the cursor: this node lost the lease and must stop its pass. */
export class CursorLostError extends Error {
  constructor() {
    super('the cursor was moved by another node (lease lost)');
    this.name = 'CursorLostError';
  }
}
