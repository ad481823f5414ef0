/**
 * A lease in the store (collection `listener_leases`): one node at a time listens to a rail set
 * (`<chain>:<network>`). The holder renews it by compare-and-set before it lapses; any other node takes
 * it over by compare-and-set once `expires_at` has passed (the holder died or stopped). Two holders for a
 * moment (a paused holder whose lease lapsed) are harmless: deposits are keyed and inserted once, and
 * cursors are written by compare-and-set, so the late writer's pass fails and stops.
 *
 * Expiry compares node clocks: keep them within a small fraction of the TTL (NTP).
 */
import { isConflict, isDuplicate, type Doc, type Store } from '../store/port.ts';

export const LEASE_COLLECTION = 'listener_leases';

export interface LeaseDoc extends Doc {
  owner: string;
  expires_at: string;
  acquired_at: string;
  renewed_at: string;
}

export class Lease {
  readonly id: string;
  readonly owner: string;
  private readonly store: Store;
  private readonly ttlMs: number;
  private readonly now: () => Date;
  /** our copy of the lease while we hold it */
  private doc: LeaseDoc | null = null;

  constructor(store: Store, id: string, owner: string, ttlMs: number, now: () => Date = () => new Date()) {
    this.store = store;
    this.id = id;
    this.owner = owner;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /**
   * Whether we hold the lease now by our own clock: until a margin before its expiry, so that we have
   * stopped before another node may take it over (a node cut from the store cannot renew; it must stop).
   */
  get held(): boolean {
    return this.doc !== null && Date.parse(this.doc.expires_at) - this.margin > this.now().getTime();
  }

  /** how long before expiry the holder counts the lease as lost: a tenth of the TTL, at most a second */
  private get margin(): number {
    return Math.min(1000, this.ttlMs / 10);
  }

  /**
   * Takes, keeps or renews the lease; true when we hold it afterwards. Renews only once a third of the
   * TTL has passed since the last renewal, so a fast poll loop does not write on every pass.
   * "Hold it afterwards" is judged by our clock after the store answered (`held`): a renewal whose answer
   * came back late (a cut that healed just in time, a store stalled for longer than the TTL) may have
   * written an expiry that has already passed, and another node may hold the lease by now.
   */
  async hold(): Promise<boolean> {
    const now = this.now();
    const at = now.toISOString();
    const next = (prev: LeaseDoc | null): LeaseDoc => ({
      id: this.id,
      owner: this.owner,
      expires_at: new Date(now.getTime() + this.ttlMs).toISOString(),
      acquired_at: prev && prev.owner === this.owner ? prev.acquired_at : at,
      renewed_at: at,
    });
    try {
      const cur = await this.store.get<LeaseDoc>(LEASE_COLLECTION, this.id);
      if (!cur) {
        const doc = next(null);
        await this.store.write([{ op: 'insert', coll: LEASE_COLLECTION, doc }]);
        this.doc = doc;
        return this.held;
      }
      const lapsed = Date.parse(cur.expires_at) <= now.getTime();
      if (cur.owner !== this.owner && !lapsed) {
        this.doc = null;
        return false;
      }
      if (cur.owner === this.owner && !lapsed && now.getTime() - Date.parse(cur.renewed_at) < this.ttlMs / 3) {
        this.doc = cur;
        return this.held;
      }
      const doc = next(cur);
      await this.store.write([{ op: 'cas', coll: LEASE_COLLECTION, doc, expected: cur.version! }]);
      this.doc = doc;
      return this.held;
    } catch (e) {
      if (isConflict(e) || isDuplicate(e)) {
        this.doc = null;
        return false;
      }
      throw e;
    }
  }

  /** Gives the lease up (on stop) so that another node takes over at once; only if we still hold it. */
  async release(): Promise<void> {
    this.doc = null;
    const cur = await this.store.get<LeaseDoc>(LEASE_COLLECTION, this.id);
    if (!cur || cur.owner !== this.owner) return;
    const at = this.now().toISOString();
    try {
      await this.store.write([
        { op: 'cas', coll: LEASE_COLLECTION, doc: { ...cur, expires_at: at, renewed_at: at }, expected: cur.version! },
      ]);
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
}
