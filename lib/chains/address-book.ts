/**
 * The deposit addresses a chain listener watches: an in-memory map address → session, loaded from the
 * `payment_sessions` collection and kept fresh without scanning it on every pass.
 *
 * Session ids are time-sortable (lib/core/ids.ts: `ps_<10 chars of milliseconds><random>`), so a refresh reads
 * only the sessions whose id is at or after "the last refresh − OVERLAP" (a range on the primary key): a
 * session created on any node shows up at the next pass after its document is written, even when its
 * id was made a little before a later session's (concurrent creations) or on a node whose clock is a few
 * seconds behind. A full reload every FULL_RELOAD_MS catches anything older and drops sessions that left
 * the watch window.
 *
 * The watch window: a session's address stays watched until `expires_at + keepAfterExpiryMs`, so that
 * overpayments and late payments are still recorded on it (DESIGN.md: a late payment is never dropped
 * while its address is watched). Entries of every network of the chain are kept: a payment on one
 * network to an address of a session on another is recorded as an orphan (wrong network).
 *
 * Every entry carries `seq`, the order in which this book learned of it (incremental refresh, full
 * reload or first load alike): a scanner that remembers the highest seq it has handled finds the
 * addresses that are new to it (lib/chains/ethereum/backfill.ts then looks for payments they already
 * got in blocks the scanner had passed while it did not know them).
 */
import type { Store } from '../store/port.ts';

export interface WatchedAddress {
  session_id: string;
  /** as stored on the session (EIP-55 for Ethereum, base58 for Solana) */
  address: string;
  network: string;
  token: string;
  expires_ms: number;
  /** watched until then: expires_ms plus the late window (none for demo sessions) */
  until_ms: number;
  /** the session's created_at (ms); null when the document has none */
  created_ms: number | null;
  /** when this book learned of the address: increases with every new entry, kept across reloads */
  seq: number;
}

interface SessionRow {
  id: string;
  chain: string;
  network: string;
  token: string;
  address: string;
  expires_at: string;
  created_at?: string;
  [k: string]: unknown;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The id prefix of sessions created at `ms` (the 10-character time part of lib/core/ids.ts). */
export function sessionIdAt(ms: number): string {
  let out = '';
  let n = Math.max(0, Math.floor(ms));
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return `ps_${out}`;
}

/** The longest a session can live (sessions.service.ts: EXPIRES_IN_MAX_MS): older ids cannot be watched. */
export const MAX_SESSION_LIFETIME_MS = 7 * 86_400_000;

export interface AddressBookOptions {
  /** how long after expires_at an address stays watched */
  keepAfterExpiryMs: number;
  /** re-read window of an incremental refresh (default 15 s) */
  overlapMs?: number;
  /** period of the full reload (default 10 min) */
  fullReloadMs?: number;
  /** page size of the store reads (default 2,000) */
  pageSize?: number;
  now?: () => Date;
}

export class SessionAddressBook {
  readonly chain: string;
  private readonly store: Store;
  private readonly keepAfterExpiryMs: number;
  private readonly overlapMs: number;
  private readonly fullReloadMs: number;
  private readonly pageSize: number;
  private readonly now: () => Date;
  private map = new Map<string, WatchedAddress>();
  private lastRefreshMs = 0;
  private lastFullMs = 0;
  private seqCounter = 0;
  /** documents read from the store by the last refresh (benchmarks) */
  lastRead = 0;

  constructor(store: Store, chain: string, opts: AddressBookOptions) {
    this.store = store;
    this.chain = chain;
    this.keepAfterExpiryMs = opts.keepAfterExpiryMs;
    this.overlapMs = opts.overlapMs ?? 15_000;
    this.fullReloadMs = opts.fullReloadMs ?? 600_000;
    this.pageSize = opts.pageSize ?? 2000;
    this.now = opts.now ?? (() => new Date());
  }

  /** the key an address is looked up by: Ethereum addresses case-insensitively */
  normalize(address: string): string {
    return this.chain === 'ethereum' ? address.toLowerCase() : address;
  }

  get size(): number {
    return this.map.size;
  }

  /** the highest `seq` given so far (0: none) */
  get lastSeq(): number {
    return this.seqCounter;
  }

  /** Brings the map up to date (see the file header); cheap when few sessions were created since. */
  async refresh(): Promise<void> {
    const nowMs = this.now().getTime();
    // Date.now(), not the injectable clock, bounds the id range: ids are made from the wall clock
    const wall = Date.now();
    const full = this.lastFullMs === 0 || wall - this.lastFullMs >= this.fullReloadMs;
    const from = full ? wall - MAX_SESSION_LIFETIME_MS - this.keepAfterExpiryMs - this.overlapMs : this.lastRefreshMs - this.overlapMs;
    const previous = this.map;
    const next = full ? new Map<string, WatchedAddress>() : this.map;
    this.lastRead = 0;
    let after: string | null = null;
    const lower = sessionIdAt(from);
    for (;;) {
      const page: SessionRow[] = await this.store.find<SessionRow>(
        'payment_sessions',
        { chain: this.chain, id: after === null ? { $gte: lower } : { $gt: after } },
        { sort: 'id', limit: this.pageSize },
      );
      this.lastRead += page.length;
      for (const s of page) {
        const expires = Date.parse(s.expires_at);
        if (typeof s.address !== 'string' || !Number.isFinite(expires)) continue;
        // demo sessions (public, anyone can make them) are watched until they expire, not for the late window
        const until = expires + (s.demo === true ? 0 : this.keepAfterExpiryMs);
        if (until <= nowMs) continue;
        const key = this.normalize(s.address);
        const known = previous.get(key);
        const created = typeof s.created_at === 'string' ? Date.parse(s.created_at) : NaN;
        next.set(key, {
          session_id: s.id,
          address: s.address,
          network: s.network,
          token: s.token,
          expires_ms: expires,
          until_ms: until,
          created_ms: Number.isFinite(created) ? created : null,
          seq: known && known.session_id === s.id ? known.seq : ++this.seqCounter,
        });
      }
      if (page.length < this.pageSize) break;
      after = page[page.length - 1]!.id;
    }
    this.map = next;
    this.lastRefreshMs = wall;
    if (full) this.lastFullMs = wall;
  }

  get(address: string): WatchedAddress | undefined {
    const e = this.map.get(this.normalize(address));
    if (e && e.until_ms <= this.now().getTime()) return undefined;
    return e;
  }

  has(address: string): boolean {
    return this.get(address) !== undefined;
  }

  /** every watched address (all networks of the chain) */
  entries(): WatchedAddress[] {
    const nowMs = this.now().getTime();
    const out: WatchedAddress[] = [];
    for (const [k, e] of this.map) {
      if (e.until_ms <= nowMs) this.map.delete(k);
      else out.push(e);
    }
    return out;
  }
}
