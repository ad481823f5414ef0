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
 *   (lib/chains/solana-parse.ts): SOL to a session address, and SPL tokens to token accounts owned by a
 *   session address. A token account of the configured mint under the classic SPL Token program is USDC;
 *   any other mint or program is recorded as an orphan (wrong token) and never moves a session.
 * - every deposit is recorded (insert by key solana:<network>:<signature>:<account index>) and delivered;
 *   the address's cursor moves only after that, so a restart re-reads and doubles nothing.
 *
 * Cost: two getSignaturesForAddress calls per watched address per pass (plus one getTransaction per
 * new transaction). Sessions before expires_at are polled on every pass; after it (late payments, kept
 * until the address book's window ends) on every latePollEvery-th pass.
 */
import { Connection, PublicKey, type Finality, type ConfirmedSignatureInfo } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, extractSolanaDeposits, keyToString,
  type ParsedTransactionLike,
} from './solana-parse.ts';
import { DepositLedger, forEachLimited, type DepositDoc, type FoundDeposit } from './deposits.ts';
import type { SessionAddressBook, WatchedAddress } from './address-book.ts';
import { CURSORS, CursorLostError } from './ethereum-listener.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../store/port.ts';

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
  ledger: DepositLedger;
  /** addresses polled at once (default 16) */
  parallel?: number;
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

  constructor(opts: SolanaListenerOptions) {
    this.o = opts;
    this.network = opts.network;
    this.finality = opts.commitment === 'finalized' ? 'finalized' : 'confirmed';
    this.conn = new Connection(opts.rpcUrl, { commitment: this.finality, disableRetryOnRateLimit: true });
    this.now = opts.now ?? (() => new Date());
    this.log = opts.log ?? console;
    this.mint = opts.usdcMint ? new PublicKey(opts.usdcMint) : null;
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
      id: this.cursorId(address), chain: 'solana', network: this.network, address,
      signature: newest.signature, slot: newest.slot, updated_at: this.now().toISOString(),
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

  /** signatures newer than the address's cursor, newest first */
  private async newSignatures(address: string, cursor: SolCursorDoc | null): Promise<ConfirmedSignatureInfo[]> {
    const out: ConfirmedSignatureInfo[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.conn.getSignaturesForAddress(
        new PublicKey(address), { limit: PAGE, ...(cursor ? { until: cursor.signature } : {}), ...(before ? { before } : {}) }, this.finality,
      );
      out.push(...page);
      if (page.length < PAGE) return out;
      before = page[page.length - 1]!.signature;
    }
  }

  async slot(): Promise<number> {
    return this.conn.getSlot(this.finality);
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
    const seen = new Set<string>();
    let holding = true;
    let lastLeaseCheck = Date.now();
    await forEachLimited(due, this.o.parallel ?? 16, async (entry) => {
      if (!holding) return;
      if (Date.now() - lastLeaseCheck > 1000) {
        lastLeaseCheck = Date.now();
        holding = await stillHolding();
        if (!holding) return;
      }
      try {
        await this.pollOwner(entry, slotNow, seen, stats);
      } catch (e) {
        if (e instanceof CursorLostError) {
          holding = false;
          throw e;
        }
        stats.failed++;
        this.log.warn(`solana ${this.network}: polling ${entry.address} failed, retried next pass:`, (e as Error).message);
      }
    });
    return stats;
  }

  private async pollOwner(entry: WatchedAddress, slotNow: number, seen: Set<string>, stats: SolPassStats): Promise<void> {
    stats.polled++;
    const addresses = [entry.address];
    const ata = this.ata(entry.address);
    if (ata) addresses.push(ata);
    const lists: Array<{ address: string; cursor: SolCursorDoc | null; sigs: ConfirmedSignatureInfo[] }> = [];
    for (const address of addresses) {
      const cursor = await this.cursor(address);
      lists.push({ address, cursor, sigs: await this.newSignatures(address, cursor) });
    }
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
      const payer = ptx.transaction.message.accountKeys[0];
      for (const d of deps) {
        const isUsdc = d.mint !== null && this.mint !== null && d.mint === this.mint.toBase58() && d.tokenProgram === TOKEN_PROGRAM_ID;
        const found: FoundDeposit = {
          chain: 'solana', network: this.network, tx_hash: d.signature, index: d.index, to_address: d.owner,
          from_address: payer ? keyToString(payer) : null, account: d.account,
          token: d.mint === null ? 'SOL' : isUsdc ? 'USDC' : null, token_contract: d.mint, amount_subunits: d.amount,
          block_number: d.slot, block_hash: null, block_time_ms: d.blockTime !== null ? d.blockTime * 1000 : null,
          confirmations: Math.max(1, slotNow - d.slot + 1),
        };
        const doc = await this.o.ledger.record(found, this.o.book.get(d.owner));
        if (doc) owed.push(doc);
        stats.deposits++;
      }
    }
    for (const d of owed) await this.o.ledger.deliver(d.id, d);
    for (const l of lists) if (l.sigs.length > 0) await this.saveCursor(l.address, l.cursor, l.sigs[0]!);
  }

  close(): void {
    // Connection holds no sockets without subscriptions
  }
}
