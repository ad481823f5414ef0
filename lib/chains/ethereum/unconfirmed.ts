/**
 * Transfers to one address in the blocks a listener has not processed yet (above its cursor, most of them
 * still below the confirmation depth): what session diagnostics show as "seen, waiting for
 * confirmations". Read-only and bounded (at most `maxBlocks` blocks); nothing is recorded from here: the
 * listener records deposits once they are deep enough.
 */
import type { JsonRpcProvider } from 'ethers';
import { addressTopic, decodeTransferLog, TRANSFER_TOPIC } from './erc20.ts';

export interface ShallowTransfer {
  tx_hash: string;
  token: 'USDC' | 'ETH';
  amount_subunits: string;
  block_number: number;
  confirmations: number;
  block_time: string | null;
}

export async function transfersAboveCursor(
  provider: JsonRpcProvider,
  o: {
    address: string;
    usdcContract: string;
    cursorBlock: number;
    maxBlocks?: number;
  },
): Promise<ShallowTransfer[]> {
  const head = await provider.getBlockNumber();
  const from = Math.max(o.cursorBlock + 1, head - (o.maxBlocks ?? 64) + 1, 0);
  if (from > head) return [];
  const out: ShallowTransfer[] = [];
  const times = new Map<number, string | null>();
  const blockTime = async (n: number) => {
    if (!times.has(n)) {
      const b = await provider.getBlock(n);
      times.set(n, b ? new Date(b.timestamp * 1000).toISOString() : null);
    }
    return times.get(n)!;
  };
  if (o.usdcContract) {
    const logs = await provider.getLogs({
      address: o.usdcContract,
      topics: [TRANSFER_TOPIC, null, addressTopic(o.address)],
      fromBlock: from,
      toBlock: head,
    });
    for (const log of logs) {
      const t = decodeTransferLog(log as never);
      if (!t) continue;
      out.push({
        tx_hash: t.transactionHash,
        token: 'USDC',
        amount_subunits: t.amount,
        block_number: t.blockNumber,
        confirmations: head - t.blockNumber + 1,
        block_time: await blockTime(t.blockNumber),
      });
    }
  }
  const target = o.address.toLowerCase();
  for (let n = from; n <= head; n++) {
    const b = await provider.getBlock(n, true);
    if (!b) continue;
    times.set(n, new Date(b.timestamp * 1000).toISOString());
    for (const tx of b.prefetchedTransactions) {
      if (tx.to?.toLowerCase() === target && tx.value > 0n) {
        out.push({
          tx_hash: tx.hash,
          token: 'ETH',
          amount_subunits: tx.value.toString(),
          block_number: n,
          confirmations: head - n + 1,
          block_time: times.get(n)!,
        });
      }
    }
  }
  return out;
}
