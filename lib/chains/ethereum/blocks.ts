/** Ethereum block and transaction shapes as JSON-RPC returns them, shared by the scan and its backfill. */
export interface RawTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
}
export interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactions: Array<RawTx | string>;
}

export class ChainMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainMovedError';
  }
}
