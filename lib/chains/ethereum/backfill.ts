/**
 * Ethereum backfill: deposits to addresses the scanner learned of only after its cursor had passed the
 * blocks that pay them (a session written late or by a node whose clock is behind, so the address
 * book's incremental refresh missed it until the next full reload; a listener that takes the lease over
 * with its own, fresh book; a session committed just after the pass's refresh). The cursor never goes
 * back, so without this such a payment would never be seen.
 *
 * For a batch of new addresses (lib/chains/ethereum/listener.ts calls this at the start of a pass with
 * the book entries it has not handled yet):
 * - Window: from the first block whose timestamp is ≥ the oldest session's created_at − marginMs, but
 *   never more than maxBlocks below the cursor, up to the cursor (blocks the scanner has processed).
 *   The first block is found by a binary search over block timestamps (the cursor's kept blocks carry
 *   theirs; others are read with eth_getBlockByNumber, about log2(maxBlocks) header reads).
 * - ERC-20: `Transfer` logs with the new addresses in the indexed `to` topic (OR-lists of at most
 *   topicMax addresses per query), through getLogsChunked over the window, any token (as the scan).
 * - Native ETH, only when one of the new addresses belongs to an ETH session: the newest maxEthBlocks
 *   blocks of the window are read with their transactions (a full block read each: hence the smaller cap);
 *   a transaction to a new address with a value and a successful receipt is a deposit.
 * - Every log and receipt must come from the block the scanner knows at that height; otherwise the chain
 *   moved and ChainMovedError stops the pass (the batch is retried on the next one).
 * The deposits found are returned; the scanner stores and delivers them like any other (insert by key:
 * one already counted is a duplicate and changes nothing).
 */
import { getAddress } from 'ethers';
import { addressTopic, decodeTransferLog, TRANSFER_TOPIC, type Erc20Transfer, type LogFilter, type LogLike } from './erc20.ts';
import type { FoundDeposit } from '../deposit-inbox.ts';
import { forEachLimited } from '../../core/concurrency.ts';
import type { WatchedAddress } from '../address-book.ts';
import { ChainMovedError, type RawBlock, type RawTx } from './blocks.ts';

export interface BackfillLimits {
  /** the window starts this long before the oldest new session's created_at (clock differences) */
  marginMs: number;
  /** the window reaches at most this many blocks below the cursor (logs) */
  maxBlocks: number;
  /** native ETH: at most this many blocks (the newest of the window) are read in full */
  maxEthBlocks: number;
  /** addresses per log query's `to` topic list */
  topicMax: number;
  parallel: number;
}

/** What the backfill needs from the scanner (its provider and its knowledge of processed blocks). */
export interface BackfillChain {
  network: string;
  /** the configured USDC contract (EIP-55), or null */
  usdc: string | null;
  block(n: number, full: boolean): Promise<RawBlock | null>;
  logs(filter: LogFilter, from: number, to: number): Promise<LogLike[]>;
  receipt(hash: string): Promise<{ status?: string; blockHash?: string } | null>;
}

export interface BackfillStats {
  addresses: number;
  /** the window (from > to: nothing to look at) */
  from: number;
  to: number;
  /** first block read for ETH (−1: ETH not looked for) */
  eth_from: number;
  logs: number;
  /** deposits found (already counted ones included) */
  deposits: number;
}

/** A USDC (or other ERC-20) transfer to a watched address as a deposit. */
export function transferDeposit(network: string, usdc: string | null, t: Erc20Transfer, blockTimeS: number, head: number): FoundDeposit {
  const isUsdc = usdc !== null && t.token === usdc;
  return {
    chain: 'ethereum',
    network,
    tx_hash: t.transactionHash,
    index: t.logIndex,
    to_address: t.to,
    from_address: t.from,
    account: null,
    token: isUsdc ? 'USDC' : null,
    token_contract: t.token,
    amount_subunits: t.amount,
    block_number: t.blockNumber,
    block_hash: t.blockHash,
    block_time_ms: blockTimeS * 1000,
    confirmations: head - t.blockNumber + 1,
  };
}

/** A plain ETH transaction to a watched address as a deposit (key index −1). */
export function ethDeposit(network: string, tx: RawTx, block: RawBlock, head: number): FoundDeposit {
  const n = Number(block.number);
  return {
    chain: 'ethereum',
    network,
    tx_hash: tx.hash,
    index: -1,
    to_address: getAddress(tx.to!),
    from_address: getAddress(tx.from),
    account: null,
    token: 'ETH',
    token_contract: null,
    amount_subunits: BigInt(tx.value).toString(),
    block_number: n,
    block_hash: block.hash,
    block_time_ms: Number(block.timestamp) * 1000,
    confirmations: head - n + 1,
  };
}

/**
 * Finds the deposits to `entries` in blocks up to `cursor.block` (see the file header).
 * `cursor.hashes` are the scanner's kept [number, hash, timestamp?] of recently processed blocks.
 */
export async function findMissedDeposits(
  chain: BackfillChain,
  entries: readonly WatchedAddress[],
  cursor: { block: number; hashes: ReadonlyArray<readonly [number, string, number?]> },
  head: number,
  limits: BackfillLimits,
): Promise<{ found: FoundDeposit[]; stats: BackfillStats }> {
  const to = cursor.block;
  const stats: BackfillStats = { addresses: entries.length, from: to + 1, to, eth_from: -1, logs: 0, deposits: 0 };
  if (entries.length === 0 || to < 0) return { found: [], stats };

  // what is known of processed blocks: hash and time, read once
  const headers = new Map<number, { hash: string; time: number }>();
  for (const [n, hash, time] of cursor.hashes) if (time !== undefined) headers.set(n, { hash, time });
  const header = async (n: number) => {
    let h = headers.get(n);
    if (!h) {
      const b = await chain.block(n, false);
      if (!b) throw new ChainMovedError(`block ${n} is not there (backfill)`);
      h = { hash: b.hash, time: Number(b.timestamp) };
      headers.set(n, h);
    }
    return h;
  };

  // the window: the first block at or after the oldest session's creation − margin, within maxBlocks
  const lowest = Math.max(0, to - limits.maxBlocks + 1);
  const oldest = entries.reduce((m, e) => Math.min(m, e.created_ms ?? -Infinity), Infinity);
  const sinceS = (oldest - limits.marginMs) / 1000;
  let lo = lowest;
  if ((await header(to)).time < sinceS)
    lo = to + 1; // every session is newer than the cursor's block
  else if ((await header(lo)).time < sinceS) {
    let hi = to; // invariant: block lo is older than sinceS, block hi is not
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await header(mid)).time < sinceS) lo = mid;
      else hi = mid;
    }
    lo = hi;
  }
  stats.from = lo;
  if (lo > to) return { found: [], stats };

  const byAddress = new Map(entries.map((e) => [e.address.toLowerCase(), e]));
  const found: FoundDeposit[] = [];

  // ERC-20 transfers to the new addresses, topicMax addresses per query
  const topics = entries.map((e) => addressTopic(e.address));
  for (let i = 0; i < topics.length; i += limits.topicMax) {
    const filter: LogFilter = { topics: [TRANSFER_TOPIC, null, topics.slice(i, i + limits.topicMax)] };
    const logs = await chain.logs(filter, lo, to);
    stats.logs += logs.length;
    for (const log of logs) {
      const t = decodeTransferLog(log);
      if (!t || t.removed || !byAddress.has(t.to.toLowerCase())) continue;
      const h = await header(t.blockNumber);
      if (h.hash !== t.blockHash) throw new ChainMovedError(`log of block ${t.blockNumber} is from another branch (backfill)`);
      found.push(transferDeposit(chain.network, chain.usdc, t, h.time, head));
    }
  }

  // native ETH, only for a batch with an ETH session in it
  if (entries.some((e) => e.token === 'ETH')) {
    const ethFrom = Math.max(lo, to - limits.maxEthBlocks + 1);
    stats.eth_from = ethFrom;
    const numbers = Array.from({ length: to - ethFrom + 1 }, (_, i) => ethFrom + i);
    const candidates: Array<{ tx: RawTx; block: RawBlock }> = [];
    await forEachLimited(numbers, limits.parallel, async (n) => {
      const b = await chain.block(n, true);
      if (!b) throw new ChainMovedError(`block ${n} is not there (backfill)`);
      const known = headers.get(n);
      if (known && known.hash !== b.hash) throw new ChainMovedError(`block ${n} changed since it was processed (backfill)`);
      for (const tx of b.transactions) {
        if (typeof tx === 'string' || !tx.to || !tx.value || BigInt(tx.value) === 0n) continue;
        if (byAddress.has(tx.to.toLowerCase())) candidates.push({ tx, block: b });
      }
    });
    await forEachLimited(candidates, limits.parallel, async ({ tx, block }) => {
      const receipt = await chain.receipt(tx.hash);
      if (!receipt || receipt.blockHash !== block.hash)
        throw new ChainMovedError(`receipt of ${tx.hash} is not in block ${Number(block.number)} (backfill)`);
      if (Number(receipt.status) === 1) found.push(ethDeposit(chain.network, tx, block, head));
    });
  }
  stats.deposits = found.length;
  return { found, stats };
}
