/**
 * The Ethereum deposit scanner of one network (one pass at a time; services/ethereum-listener.service.ts
 * runs it under the network's lease). No broker in here.
 *
 * A pass:
 * 1. Reorg check: the hashes of the recently processed blocks are kept in the cursor
 *    (`listener_cursors`, id ethereum:<network>). The newest is compared with the chain; when it differs,
 *    the kept hashes are walked down to the newest one that still matches (the fork point). Deposits in
 *    blocks above it are taken back (stored as reverted first, then `revert` to the session) and the
 *    cursor moves back to the fork point, so the new branch is scanned again.
 * 2. Scan: blocks cursor+1 … head − confirmations + 1 (never past the confirmed head), in ranges of at
 *    most maxBlockRange blocks:
 *    - ERC-20 `Transfer` logs (eth_getLogs through getLogsChunked, which halves a range a provider
 *      refuses). With up to topicFilterMax watched addresses the query names them in the indexed `to`
 *      topic and has no contract filter, so transfers of ANY token to a session address are seen (a
 *      token that is not the configured USDC is recorded as an orphan). With more, the query asks for the
 *      configured USDC contract's transfers and filters them locally against the address book (other
 *      tokens are then not looked for: a topic list that long is refused by providers).
 *    - Native ETH: every block of the range is read with its transactions; a transaction whose `to` is a
 *      session address and whose value is not zero is a deposit once its receipt says success. ETH moved
 *      by a contract (an internal transfer, e.g. from a smart-contract wallet or an exchange's batch
 *      contract) emits no transaction to the address and is NOT seen; buyers must send plain transfers.
 *    - Consistency: the blocks read must chain (parentHash) onto the cursor's last block and each log's
 *      block hash must be the block read at that height; otherwise the chain moved during the pass, the
 *      pass stops without moving the cursor, and the next pass's reorg check sorts it out.
 * 3. Every deposit is recorded (lib/chains/deposit-inbox.ts: insert by key, a replay is ignored) and then
 *    delivered to its session; the cursor advances (compare-and-set) only after the range's deposits are
 *    stored, so a crash or restart re-reads the range and doubles nothing.
 *
 * Before the scan, addresses the address book learned of since this scanner last looked (all of them
 * after start-up or a lease take-over) are backfilled: the blocks already processed since their sessions
 * were created are searched for payments to them (lib/chains/ethereum/backfill.ts), which go through the
 * same record-then-deliver path. The cursor never moves back for this.
 */
import { FetchRequest, JsonRpcProvider, getAddress } from 'ethers';
import { addressTopic, decodeTransferLog, getLogsChunked, TRANSFER_TOPIC, type LogFilter, type LogLike } from './erc20.ts';
import { DepositInbox, type DepositDoc, type FoundDeposit } from '../deposit-inbox.ts';
import { forEachLimited } from '../../core/concurrency.ts';
import { ethDeposit, findMissedDeposits, transferDeposit, type BackfillStats } from './backfill.ts';
import type { SessionAddressBook } from '../address-book.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../../store/port.ts';
import { CURSORS, CursorLostError } from '../cursor.ts';
import { ChainMovedError, type RawBlock, type RawTx } from './blocks.ts';

export interface EthCursorDoc extends Doc {
  chain: 'ethereum';
  network: string;
  /** the last processed block (−1: none yet) */
  block: number;
  /** [number, hash, timestamp (s)] of recently processed blocks, ascending (older cursors: no timestamp) */
  hashes: Array<[number, string, number?]>;
  updated_at: string;
}

export interface EthereumListenerOptions {
  network: string;
  rpcUrl: string;
  /** the USDC contract; empty: no ERC-20 is recognised as USDC */
  usdcAddress: string;
  /** block depth: 1 = the head block counts */
  confirmations: number;
  store: Store;
  book: SessionAddressBook;
  inbox: DepositInbox;
  /** largest block range of one step (default 500) */
  maxBlockRange?: number;
  /** how many recent block hashes are kept for reorg checks (default 128) */
  keepBlocks?: number;
  /** on the very first pass, start this many blocks below the confirmed head (default 64) */
  startLookback?: number;
  /** up to this many watched addresses go into the log query's `to` topic (default 500) */
  topicFilterMax?: number;
  /** parallel block reads / deliveries (default 8) */
  parallel?: number;
  /** backfill: the window starts this long before the new session's created_at (default 2 min) */
  backfillMarginMs?: number;
  /** backfill: at most this many processed blocks are searched for logs (default 1,000) */
  backfillMaxBlocks?: number;
  /** backfill: at most this many processed blocks are read in full for ETH (default 150) */
  backfillMaxEthBlocks?: number;
  rpcTimeoutMs?: number;
  now?: () => Date;
  log?: { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
}

export interface EthPassStats {
  head: number;
  /** the highest block this pass may process (head − confirmations + 1) */
  target: number;
  /** the cursor after the pass */
  cursor: number;
  blocks: number;
  logs: number;
  deposits: number;
  reverted: number;
  /** fork point when a reorg was found */
  fork: number | null;
  /** this pass's backfill of addresses new to the scanner, if any */
  backfill: BackfillStats | null;
  /** since the scanner started: backfills run, deposits they found (already counted ones included) */
  backfills: { runs: number; deposits: number };
}

const hex = (n: number) => `0x${n.toString(16)}`;

export class EthereumRailListener {
  readonly network: string;
  readonly cursorId: string;
  private readonly o: Required<Omit<EthereumListenerOptions, 'log' | 'now'>> & Pick<EthereumListenerOptions, 'log'>;
  private readonly now: () => Date;
  private readonly usdc: string | null;
  private provider: JsonRpcProvider | null = null;
  private readonly log: NonNullable<EthereumListenerOptions['log']>;
  /** the address book entries up to this seq have been backfilled (0: none, e.g. after start-up) */
  private backfilledSeq = 0;
  private readonly backfills = { runs: 0, deposits: 0 };

  constructor(opts: EthereumListenerOptions) {
    this.o = {
      maxBlockRange: 500,
      keepBlocks: 128,
      startLookback: 64,
      topicFilterMax: 500,
      parallel: 8,
      rpcTimeoutMs: 30_000,
      backfillMarginMs: 120_000,
      backfillMaxBlocks: 1000,
      backfillMaxEthBlocks: 150,
      ...opts,
    } as EthereumRailListener['o'];
    this.network = opts.network;
    this.cursorId = `ethereum:${opts.network}`;
    this.now = opts.now ?? (() => new Date());
    this.usdc = opts.usdcAddress ? getAddress(opts.usdcAddress) : null;
    this.log = opts.log ?? console;
  }

  /** the provider, created on first use: the chain id is asked once, then fixed */
  private async rpc(): Promise<JsonRpcProvider> {
    if (this.provider) return this.provider;
    const req = new FetchRequest(this.o.rpcUrl);
    req.timeout = this.o.rpcTimeoutMs;
    const probe = new JsonRpcProvider(req, undefined, { staticNetwork: true, cacheTimeout: -1 });
    let chainId: number;
    try {
      chainId = Number(await probe.send('eth_chainId', []));
    } finally {
      probe.destroy();
    }
    this.provider = new JsonRpcProvider(req, chainId, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 50 });
    return this.provider;
  }

  /** this node (re)took the lease: another holder may have passed payments to addresses it did not know */
  reset(): void {
    this.backfilledSeq = 0;
  }

  close(): void {
    this.provider?.destroy();
    this.provider = null;
  }

  async loadCursor(): Promise<EthCursorDoc | null> {
    return this.o.store.get<EthCursorDoc>(CURSORS, this.cursorId);
  }

  private async saveCursor(c: EthCursorDoc): Promise<EthCursorDoc> {
    const doc: EthCursorDoc = { ...c, updated_at: this.now().toISOString() };
    try {
      if (c.version === undefined) await this.o.store.write([{ op: 'insert', coll: CURSORS, doc }]);
      else await this.o.store.write([{ op: 'cas', coll: CURSORS, doc, expected: c.version }]);
    } catch (e) {
      if (isConflict(e) || isDuplicate(e)) throw new CursorLostError();
      throw e;
    }
    return doc;
  }

  private async block(n: number, full: boolean): Promise<RawBlock | null> {
    const p = await this.rpc();
    return (await p.send('eth_getBlockByNumber', [hex(n), full])) as RawBlock | null;
  }

  async head(): Promise<number> {
    const p = await this.rpc();
    return Number(await p.send('eth_blockNumber', []));
  }

  /**
   * One pass (see the file header). `stillHolding` is asked before each range: when it answers false
   * (the lease was lost) the pass stops.
   */
  async pass(stillHolding: () => Promise<boolean> = async () => true): Promise<EthPassStats> {
    const head = await this.head();
    const target = head - Math.max(1, this.o.confirmations) + 1;
    const stats: EthPassStats = {
      head,
      target,
      cursor: -1,
      blocks: 0,
      logs: 0,
      deposits: 0,
      reverted: 0,
      fork: null,
      backfill: null,
      backfills: { ...this.backfills },
    };
    let cursor = await this.loadCursor();
    if (!cursor) {
      cursor = await this.saveCursor({
        id: this.cursorId,
        chain: 'ethereum',
        network: this.network,
        block: Math.max(-1, target - this.o.startLookback),
        hashes: [],
        updated_at: '',
      });
    }
    if (!Number.isInteger(cursor.block) || cursor.block < -1) cursor = { ...cursor, block: -1 };
    cursor = await this.checkReorg(cursor, stats);
    await this.o.book.refresh();
    await this.backfill(cursor, head, stats);
    while (cursor.block < target) {
      if (!(await stillHolding())) break;
      const from = cursor.block + 1;
      const to = Math.min(target, from + this.o.maxBlockRange - 1);
      cursor = await this.scanRange(cursor, from, to, head, stats);
    }
    stats.cursor = cursor.block;
    return stats;
  }

  /** Compares the kept hashes with the chain; on a reorg takes deposits back and moves the cursor back. */
  private async checkReorg(cursor: EthCursorDoc, stats: EthPassStats): Promise<EthCursorDoc> {
    const kept = cursor.hashes;
    if (kept.length === 0) return cursor;
    const [newestN, newestH] = kept[kept.length - 1]!;
    if ((await this.block(newestN, false))?.hash === newestH) return cursor;
    let fork = kept[0]![0] - 1;
    let keep = 0;
    for (let i = kept.length - 2; i >= 0; i--) {
      const [n, h] = kept[i]!;
      if ((await this.block(n, false))?.hash === h) {
        fork = n;
        keep = i + 1;
        break;
      }
    }
    if (keep === 0)
      this.log.error(`ethereum ${this.network}: reorg deeper than the ${kept.length} kept blocks; rescanning from block ${fork + 1}`);
    else this.log.warn(`ethereum ${this.network}: reorg; blocks above ${fork} left the canonical chain`);
    // the store first: deposits above the fork are reverted before the cursor moves back
    const reverted = await this.o.inbox.revertAbove('ethereum', this.network, fork);
    stats.fork = fork;
    stats.reverted += reverted.length;
    await this.deliverAll(reverted);
    return this.saveCursor({ ...cursor, block: Math.min(cursor.block, fork), hashes: kept.slice(0, keep) });
  }

  /** Backfills the address book entries this scanner has not handled yet (lib/chains/ethereum/backfill.ts). */
  private async backfill(cursor: EthCursorDoc, head: number, stats: EthPassStats): Promise<void> {
    const upTo = this.o.book.lastSeq;
    const fresh = this.o.book.entries().filter((e) => e.seq > this.backfilledSeq);
    if (fresh.length > 0) {
      const p = await this.rpc();
      const { found, stats: b } = await findMissedDeposits(
        {
          network: this.network,
          usdc: this.usdc,
          block: (n, full) => this.block(n, full),
          logs: (filter, from, to) => getLogsChunked(p, filter, from, to, { maxBlockRange: this.o.maxBlockRange }),
          receipt: async (hash) => (await p.send('eth_getTransactionReceipt', [hash])) as { status?: string; blockHash?: string } | null,
        },
        fresh,
        cursor,
        head,
        {
          marginMs: this.o.backfillMarginMs,
          maxBlocks: this.o.backfillMaxBlocks,
          maxEthBlocks: this.o.backfillMaxEthBlocks,
          topicMax: this.o.topicFilterMax,
          parallel: this.o.parallel,
        },
      );
      const recorded = await this.recordAndDeliver(found);
      stats.backfill = b;
      this.backfills.runs++;
      this.backfills.deposits += found.length;
      stats.backfills = { ...this.backfills };
      if (recorded > 0)
        this.log.warn(
          `ethereum ${this.network}: backfill found ${recorded} deposit(s) in blocks ${b.from}..${b.to} to addresses learned late`,
        );
    }
    this.backfilledSeq = upTo;
  }

  /** Stores deposits (chain order; a known key is a duplicate and ignored), then delivers the new ones. */
  private async recordAndDeliver(found: FoundDeposit[]): Promise<number> {
    found.sort((a, b) => a.block_number - b.block_number || a.index - b.index);
    const owed: DepositDoc[] = [];
    for (const f of found) {
      const doc = await this.o.inbox.record(f, this.o.book.get(f.to_address));
      if (doc) owed.push(doc);
    }
    await this.deliverAll(owed);
    return owed.length;
  }

  private async scanRange(cursor: EthCursorDoc, from: number, to: number, head: number, stats: EthPassStats): Promise<EthCursorDoc> {
    const book = this.o.book;
    const watched = book.entries();
    const found: FoundDeposit[] = [];
    const blocks = new Map<number, RawBlock>();
    const numbers = watched.length > 0 ? Array.from({ length: to - from + 1 }, (_, i) => from + i) : [to];
    await forEachLimited(numbers, this.o.parallel, async (n) => {
      const b = await this.block(n, watched.length > 0);
      if (!b) throw new ChainMovedError(`block ${n} is not there (the chain is shorter than its head said)`);
      blocks.set(n, b);
    });
    stats.blocks += blocks.size;
    // the blocks read must chain onto each other and onto the cursor
    const prev = cursor.hashes.length ? cursor.hashes[cursor.hashes.length - 1]! : null;
    for (const n of numbers) {
      const b = blocks.get(n)!;
      const parent = n === from && prev && prev[0] === from - 1 ? prev[1] : blocks.get(n - 1)?.hash;
      if (parent !== undefined && b.parentHash !== parent) throw new ChainMovedError(`block ${n} does not follow block ${n - 1}`);
    }

    if (watched.length > 0) {
      let filter: LogFilter | null = null;
      if (watched.length <= this.o.topicFilterMax) filter = { topics: [TRANSFER_TOPIC, null, watched.map((w) => addressTopic(w.address))] };
      else if (this.usdc) filter = { address: this.usdc, topics: [TRANSFER_TOPIC] };
      const logs: LogLike[] = filter
        ? await getLogsChunked(await this.rpc(), filter, from, to, { maxBlockRange: this.o.maxBlockRange })
        : [];
      stats.logs += logs.length;
      for (const log of logs) {
        const t = decodeTransferLog(log);
        if (!t || t.removed || !book.has(t.to)) continue;
        const b = blocks.get(t.blockNumber);
        if (!b || b.hash !== t.blockHash) throw new ChainMovedError(`log of block ${t.blockNumber} is from another branch`);
        found.push(transferDeposit(this.network, this.usdc, t, Number(b.timestamp), head));
      }
      // native ETH: plain transactions to a session address
      const candidates: Array<{ tx: RawTx; block: RawBlock; n: number }> = [];
      for (const n of numbers) {
        const b = blocks.get(n)!;
        for (const tx of b.transactions) {
          if (typeof tx === 'string' || !tx.to || !tx.value || BigInt(tx.value) === 0n) continue;
          if (book.has(tx.to)) candidates.push({ tx, block: b, n });
        }
      }
      await forEachLimited(candidates, this.o.parallel, async ({ tx, block, n }) => {
        const receipt = (await (await this.rpc()).send('eth_getTransactionReceipt', [tx.hash])) as {
          status?: string;
          blockHash?: string;
        } | null;
        if (!receipt || receipt.blockHash !== block.hash) throw new ChainMovedError(`receipt of ${tx.hash} is not in block ${n}`);
        if (Number(receipt.status) !== 1) return;
        found.push(ethDeposit(this.network, tx, block, head));
      });
    }

    // store first (chain order), then deliver
    await this.recordAndDeliver(found);
    stats.deposits += found.length;

    const hashes: EthCursorDoc['hashes'] = [
      ...cursor.hashes.filter(([n]) => n < from),
      ...numbers.map((n): [number, string, number] => [n, blocks.get(n)!.hash, Number(blocks.get(n)!.timestamp)]),
    ];
    return this.saveCursor({ ...cursor, block: to, hashes: hashes.slice(-this.o.keepBlocks) });
  }

  /** Delivers in chain order per session (partial before completed), sessions in parallel. */
  private async deliverAll(docs: DepositDoc[]): Promise<void> {
    const bySession = new Map<string, DepositDoc[]>();
    for (const d of docs) {
      const k = d.session_id ?? '';
      bySession.set(k, [...(bySession.get(k) ?? []), d]);
    }
    await forEachLimited([...bySession.values()], this.o.parallel, async (list) => {
      for (const d of list) await this.o.inbox.deliver(d.id, d);
    });
  }
}
