/**
 * The Solana deposit scanner of one network (one pass at a time; services/solana-listener.service.ts runs
 * it under the network's lease), on @solana/web3.js 1.x's Connection. No broker in here.
 *
 * Solana has no log query across accounts, so each watched session address is asked for its history:
 * - the session address itself (SOL arrives there), and its associated token account for the configured
 *   USDC mint (wallets told the session address pay that account, creating it if needed);
 * - getSignaturesForAddress at the configured commitment (confirmed or finalized; processed is read as
 *   confirmed, the lowest level the method accepts), newest first, paged with `before` down to the
 *   address's persisted cursor (`until`: the newest signature already processed; collection
 *   `listener_cursors`, id solana:<network>:<address>);
 * - each new, successful transaction is read with getTransaction (jsonParsed,
 *   maxSupportedTransactionVersion 0) and its deposits are extracted from balance changes
 *   (lib/chains/solana/parse.ts): SOL to a session address, and SPL tokens to token accounts owned by a
 *   session address. A token account of the configured mint under the classic SPL Token program is USDC;
 *   any other mint or program is recorded as an orphan (wrong token) and never moves a session.
 * - every deposit is recorded (insert by key solana:<network>:<signature>:<account index>) and delivered;
 *   the address's cursor moves only after that, so a restart re-reads and doubles nothing.
 *
 * Cost: two getSignaturesForAddress calls per watched address per pass, sent as JSON-RPC batches of
 * batchSize (plus one getTransaction per new transaction, and store writes only for addresses with new
 * signatures). Sessions before expires_at are polled on every pass; after it (late payments, kept until
 * the address book's window ends) on every latePollEvery-th pass.
 */
import { Connection, PublicKey, type Finality, type ConfirmedSignatureInfo } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  extractSolanaDeposits,
  type ParsedTransactionLike,
} from './parse.ts';
import { DepositInbox, type DepositDoc, type FoundDeposit } from '../deposit-inbox.ts';
import { forEachLimited } from '../../core/concurrency.ts';
import type { SessionAddressBook, WatchedAddress } from '../address-book.ts';
import { CURSORS, CursorLostError } from '../cursor.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../../store/port.ts';

export interface SolCursorDoc extends Doc {
  chain: 'solana';
  network: string;
  address: string;
  /** newest processed signature */
  signature: string;
  slot: number;
  updated_at: string;
}

export interface SolanaListenerOptions {
  network: string;
  rpcUrl: string;
  /** the USDC mint; empty: no token account is watched and no SPL token is USDC */
  usdcMint: string;
  commitment: 'processed' | 'confirmed' | 'finalized';
  store: Store;
  book: SessionAddressBook;
  inbox: DepositInbox;
  /** owners processed at once (default 16) */
  parallel?: number;
  /**
   * getSignaturesForAddress calls per JSON-RPC batch request (default 100; 1 turns batching off). A
   * provider that refuses batches is detected on the first one and then asked one address at a time.
   */
  batchSize?: number;
  /** addresses past expires_at are polled on every n-th pass (default 10) */
  latePollEvery?: number;
  now?: () => Date;
  log?: { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
}

export interface SolPassStats {
  watched: number;
  polled: number;
  signatures: number;
  transactions: number;
  deposits: number;
  failed: number;
}

const PAGE = 1000;

interface AddressNews {
  address: string;
  cursor: SolCursorDoc | null;
  sigs: ConfirmedSignatureInfo[];
}
const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]);

export class SolanaRailListener {
  readonly network: string;
  private readonly o: SolanaListenerOptions;
  private readonly conn: Connection;
  private readonly finality: Finality;
  private readonly now: () => Date;
  private readonly log: NonNullable<SolanaListenerOptions['log']>;
  private readonly mint: PublicKey | null;
  private readonly cursors = new Map<string, SolCursorDoc | null>();
  private readonly atas = new Map<string, string>();
  private passes = 0;
  private batching: boolean;
  private rpcId = 0;

  constructor(opts: SolanaListenerOptions) {
    this.o = opts;
    this.network = opts.network;
    this.finality = opts.commitment === 'finalized' ? 'finalized' : 'confirmed';
    this.conn = new Connection(opts.rpcUrl, { commitment: this.finality, disableRetryOnRateLimit: true });
    this.now = opts.now ?? (() => new Date());
    this.log = opts.log ?? console;
    this.mint = opts.usdcMint ? new PublicKey(opts.usdcMint) : null;
    this.batching = (opts.batchSize ?? 100) > 1;
  }

  /** Forget cached cursors (another node may have moved them while it held the lease). */
  reset(): void {
    this.cursors.clear();
  }

  /** the associated token account of `owner` for the USDC mint */
  ata(owner: string): string | null {
    if (!this.mint) return null;
    let a = this.atas.get(owner);
    if (!a) {
      const [pda] = PublicKey.findProgramAddressSync(
        [new PublicKey(owner).toBuffer(), new PublicKey(TOKEN_PROGRAM_ID).toBuffer(), this.mint.toBuffer()],
        new PublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
      );
      a = pda.toBase58();
      this.atas.set(owner, a);
    }
    return a;
  }

  private cursorId(address: string): string {
    return `solana:${this.network}:${address}`;
  }

  private async cursor(address: string): Promise<SolCursorDoc | null> {
    if (this.cursors.has(address)) return this.cursors.get(address)!;
    const c = await this.o.store.get<SolCursorDoc>(CURSORS, this.cursorId(address));
    this.cursors.set(address, c);
    return c;
  }

  private async saveCursor(address: string, prev: SolCursorDoc | null, newest: ConfirmedSignatureInfo): Promise<void> {
    const doc: SolCursorDoc = {
      id: this.cursorId(address),
      chain: 'solana',
      network: this.network,
      address,
      signature: newest.signature,
      slot: newest.slot,
      updated_at: this.now().toISOString(),
    };
    try {
      if (prev) await this.o.store.write([{ op: 'cas', coll: CURSORS, doc, expected: prev.version! }]);
      else await this.o.store.write([{ op: 'insert', coll: CURSORS, doc }]);
    } catch (e) {
      this.cursors.delete(address);
      if (isConflict(e) || isDuplicate(e)) throw new CursorLostError();
      throw e;
    }
    this.cursors.set(address, doc);
  }

  async slot(): Promise<number> {
    return this.conn.getSlot(this.finality);
  }

  /**
   * The first page of new signatures of many addresses in JSON-RPC batch requests (raw fetch: web3.js
   * 1.x has no public batch call for this method). null for an address whose call failed.
   */
  private async firstPages(
    addresses: Array<{ address: string; cursor: SolCursorDoc | null }>,
  ): Promise<Array<ConfirmedSignatureInfo[] | null>> {
    if (!this.batching) {
      return Promise.all(addresses.map(({ address, cursor }) => this.newSignaturesPage(address, cursor).catch(() => null)));
    }
    const body = addresses.map(({ address, cursor }) => ({
      jsonrpc: '2.0',
      id: ++this.rpcId,
      method: 'getSignaturesForAddress',
      params: [address, { limit: PAGE, commitment: this.finality, ...(cursor ? { until: cursor.signature } : {}) }],
    }));
    const res = await fetch(this.o.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const json = (await res.json().catch(() => null)) as Array<{ id: number; result?: ConfirmedSignatureInfo[]; error?: unknown }> | null;
    if (!Array.isArray(json)) {
      this.batching = false;
      this.log.warn(`solana ${this.network}: the RPC node refused a batch request (HTTP ${res.status}); asking one address at a time`);
      return this.firstPages(addresses);
    }
    const byId = new Map(json.map((r) => [r.id, r]));
    return body.map((b) => {
      const r = byId.get(b.id);
      return r && Array.isArray(r.result) ? r.result : null;
    });
  }

  private newSignaturesPage(address: string, cursor: SolCursorDoc | null, before?: string): Promise<ConfirmedSignatureInfo[]> {
    return this.conn.getSignaturesForAddress(
      new PublicKey(address),
      { limit: PAGE, ...(cursor ? { until: cursor.signature } : {}), ...(before ? { before } : {}) },
      this.finality,
    );
  }

  async pass(stillHolding: () => Promise<boolean> = async () => true): Promise<SolPassStats> {
    await this.o.book.refresh();
    this.passes++;
    const nowMs = this.now().getTime();
    const every = Math.max(1, this.o.latePollEvery ?? 10);
    const mine = this.o.book.entries().filter((e) => e.network === this.network);
    const due = mine.filter((e) => nowMs < e.expires_ms || this.passes % every === 1 || every === 1);
    const stats: SolPassStats = { watched: mine.length, polled: 0, signatures: 0, transactions: 0, deposits: 0, failed: 0 };
    if (due.length === 0) return stats;
    const slotNow = await this.slot();

    // 1. new signatures of every due address and its USDC account, in batches
    const targets: Array<{ entry: WatchedAddress; address: string }> = [];
    for (const entry of due) {
      targets.push({ entry, address: entry.address });
      const ata = this.ata(entry.address);
      if (ata) targets.push({ entry, address: ata });
    }
    const batchSize = Math.max(1, this.o.batchSize ?? 100);
    const chunks: Array<typeof targets> = [];
    for (let i = 0; i < targets.length; i += batchSize) chunks.push(targets.slice(i, i + batchSize));
    const news = new Map<WatchedAddress, AddressNews[]>();
    const failedOwners = new Set<WatchedAddress>();
    let holding = true;
    let lastLeaseCheck = Date.now();
    await forEachLimited(chunks, 4, async (chunk) => {
      if (!holding) return;
      if (Date.now() - lastLeaseCheck > 1000) {
        lastLeaseCheck = Date.now();
        holding = await stillHolding();
        if (!holding) return;
      }
      const withCursors = [];
      for (const t of chunk) withCursors.push({ ...t, cursor: await this.cursor(t.address) });
      let pages: Array<ConfirmedSignatureInfo[] | null>;
      try {
        pages = await this.firstPages(withCursors);
      } catch (e) {
        this.log.warn(`solana ${this.network}: a signature batch failed, retried next pass:`, (e as Error).message);
        pages = withCursors.map(() => null);
      }
      for (let i = 0; i < withCursors.length; i++) {
        const t = withCursors[i]!;
        let sigs = pages[i];
        try {
          // a full page: walk further back to the cursor (rare: a busy address)
          while (sigs && sigs.length > 0 && sigs.length % PAGE === 0) {
            const more = await this.newSignaturesPage(t.address, t.cursor, sigs[sigs.length - 1]!.signature);
            sigs = sigs.concat(more);
            if (more.length < PAGE) break;
          }
        } catch {
          sigs = null;
        }
        if (sigs === null) failedOwners.add(t.entry);
        else if (sigs.length > 0) news.set(t.entry, [...(news.get(t.entry) ?? []), { address: t.address, cursor: t.cursor, sigs }]);
      }
    });
    if (!holding) return stats;
    stats.polled = due.length;
    stats.failed = failedOwners.size;
    if (failedOwners.size)
      this.log.warn(`solana ${this.network}: ${failedOwners.size} addresses could not be asked for signatures; retried next pass`);

    // 2. the owners with something new: read, record, deliver, then move their cursors
    const seen = new Set<string>();
    await forEachLimited(
      [...news.entries()].filter(([e]) => !failedOwners.has(e)),
      this.o.parallel ?? 16,
      async ([entry, lists]) => {
        if (!holding) return;
        try {
          await this.processOwner(lists, slotNow, seen, stats);
        } catch (e) {
          if (e instanceof CursorLostError) {
            holding = false;
            throw e;
          }
          stats.failed++;
          this.log.warn(`solana ${this.network}: reading deposits of ${entry.address} failed, retried next pass:`, (e as Error).message);
        }
      },
    );
    return stats;
  }

  private async processOwner(lists: AddressNews[], slotNow: number, seen: Set<string>, stats: SolPassStats): Promise<void> {
    const bySig = new Map<string, ConfirmedSignatureInfo>();
    for (const l of lists) for (const s of l.sigs) bySig.set(s.signature, s);
    stats.signatures += bySig.size;
    // oldest first: deposits reach the session in chain order
    const ordered = [...bySig.values()].sort((a, b) => a.slot - b.slot);
    const owed: DepositDoc[] = [];
    for (const s of ordered) {
      if (s.err !== null && s.err !== undefined) continue;
      if (seen.has(s.signature)) continue;
      seen.add(s.signature);
      const tx = await this.conn.getParsedTransaction(s.signature, { commitment: this.finality, maxSupportedTransactionVersion: 0 });
      if (!tx) throw new Error(`transaction ${s.signature} is listed but not readable at ${this.finality}`);
      stats.transactions++;
      const ptx = tx as unknown as ParsedTransactionLike;
      const deps = extractSolanaDeposits(ptx, { owners: (a) => this.o.book.has(a), tokenProgramIds: TOKEN_PROGRAMS });
      for (const d of deps) {
        const isUsdc = d.mint !== null && this.mint !== null && d.mint === this.mint.toBase58() && d.tokenProgram === TOKEN_PROGRAM_ID;
        const found: FoundDeposit = {
          chain: 'solana',
          network: this.network,
          tx_hash: d.signature,
          index: d.index,
          to_address: d.owner,
          // the transfer's owner (who a refund goes back to), not the fee payer, who may be a sponsor
          from_address: d.sender,
          account: d.account,
          token: d.mint === null ? 'SOL' : isUsdc ? 'USDC' : null,
          token_contract: d.mint,
          amount_subunits: d.amount,
          block_number: d.slot,
          block_hash: null,
          block_time_ms: d.blockTime !== null ? d.blockTime * 1000 : null,
          confirmations: Math.max(1, slotNow - d.slot + 1),
        };
        const doc = await this.o.inbox.record(found, this.o.book.get(d.owner));
        if (doc) owed.push(doc);
        stats.deposits++;
      }
    }
    for (const d of owed) await this.o.inbox.deliver(d.id, d);
    for (const l of lists) await this.saveCursor(l.address, l.cursor, l.sigs[0]!);
  }

  close(): void {
    // Connection holds no sockets without subscriptions
  }
}
