/**
 * The actor runtime: one turn at a time per actor id (a bounded mailbox), the store as the truth
 * (every write is a compare-and-set on the actor's version; a lost race drops the cached copy, reloads
 * and decides again), and idle deactivation so memory stays bounded.
 *
 * A turn takes every message queued for the actor that its behaviour lets batch (`batches`), decides them
 * in order, each against the state and the store (a write set's view) that the ones before it leave, and
 * commits all of them in ONE write: the serialization is the same as one message per turn, the write
 * and its commit are shared. A batch whose write fails for any reason but a lost race is decided again one
 * message at a time, so that each message gets the answer it would have had alone.
 */
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../lib/store/port.ts';
import { WriteSet } from '../lib/store/write-set.ts';
import { REMEDIATION, rateLimited } from '../lib/core/errors.ts';
import { retryOnConflict } from '../lib/core/retry.ts';
import { trimOldest } from '../lib/core/bounded.ts';
import type { ActorBehavior } from '../lib/core/actor.ts';

export interface ActorHostOptions {
  /** messages waiting per actor before a 429 */
  mailboxSize?: number;
  /** an actor untouched this long is deactivated */
  idleMs?: number;
  /** at most this many actors stay in memory */
  maxActive?: number;
  maxRetries?: number;
  /** at most this many messages are decided in one turn */
  maxBatch?: number;
  now?: () => Date;
  /** called when an actor is loaded into memory (metrics) */
  onActivate?: () => void;
}

interface Queued<M, R> {
  msg: M;
  resolve(reply: R): void;
  reject(e: unknown): void;
}

interface Activation<S, M, R> {
  state: S | null;
  loaded: boolean;
  /** messages waiting for a turn */
  queue: Queued<M, R>[];
  /** a turn is running (the queue is being drained) */
  running: boolean;
  /** messages queued or in the running turn */
  pending: number;
  lastUsed: number;
}

/**
 * Freezes `v` and everything it reaches that is not frozen yet. A new state shares most of its objects with
 * the one before it (frozen already), so this walks only what the turn made.
 */
function freezeDeep<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    // an array by its indices: Object.keys would make a string of each (a wallet's 1,440 spend buckets)
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) freezeDeep(v[i]);
    else for (const k of Object.keys(v)) freezeDeep((v as Record<string, unknown>)[k]);
  }
  return v;
}

type Outcome<R> = { ok: true; reply: R } | { ok: false; error: unknown } | { ok: 'alone' };

export class ActorHost<S extends Doc, M, R> {
  private active = new Map<string, Activation<S, M, R>>();
  private timer: NodeJS.Timeout;
  private readonly opts: Required<ActorHostOptions>;

  private store: Store;
  private behavior: ActorBehavior<S, M, R>;

  constructor(store: Store, behavior: ActorBehavior<S, M, R>, opts: ActorHostOptions = {}) {
    this.store = store;
    this.behavior = behavior;
    this.opts = {
      mailboxSize: 100,
      idleMs: 60_000,
      maxActive: 10_000,
      maxRetries: 25,
      maxBatch: 256,
      now: () => new Date(),
      onActivate: () => undefined,
      ...opts,
    };
    this.timer = setInterval(() => this.deactivateIdle(), Math.max(1000, this.opts.idleMs / 2));
    this.timer.unref();
  }

  get size(): number {
    return this.active.size;
  }

  /** messages queued or running over every mailbox (walks the activations: for scrapes, not hot paths) */
  get depth(): number {
    let n = 0;
    for (const a of this.active.values()) n += a.pending;
    return n;
  }

  /** Queues a message for the actor and resolves with its reply. */
  send(id: string, msg: M): Promise<R> {
    let act = this.active.get(id);
    if (!act) {
      act = { state: null, loaded: false, queue: [], running: false, pending: 0, lastUsed: Date.now() };
      this.active.set(id, act);
      this.opts.onActivate();
      this.evictOverflow();
    }
    if (act.pending >= this.opts.mailboxSize)
      return Promise.reject(
        rateLimited('too many concurrent requests for this resource, retry later', { remediation: REMEDIATION.retryLater }),
      );
    act.pending++;
    const a = act;
    return new Promise<R>((resolve, reject) => {
      a.queue.push({ msg, resolve, reject });
      if (!a.running) {
        a.running = true;
        // the turn starts after this tick, so that messages sent in the same tick share it
        queueMicrotask(() => void this.drain(id, a));
      }
    });
  }

  /** Runs turns until the mailbox is empty. */
  private async drain(id: string, act: Activation<S, M, R>): Promise<void> {
    while (act.queue.length) {
      const batch = this.takeTurn(act);
      const outcomes = batch.length > 1 ? await this.processBatch(id, act, batch) : [await this.processOne(id, act, batch[0].msg)];
      for (let i = 0; i < batch.length; i++) {
        let o = outcomes[i];
        // a message the batch could not fold in is decided alone, after the batch is committed
        if (o.ok === 'alone') o = await this.processOne(id, act, batch[i].msg);
        if (o.ok === true) batch[i].resolve(o.reply);
        else if (o.ok === false) batch[i].reject(o.error);
        act.pending--;
      }
      act.lastUsed = Date.now();
    }
    act.running = false;
  }

  /** The messages of the next turn: the first one, and the batchable ones right behind a batchable first. */
  private takeTurn(act: Activation<S, M, R>): Queued<M, R>[] {
    const batches = this.behavior.batches;
    if (!batches || !batches(act.queue[0].msg)) return [act.queue.shift()!];
    let n = 1;
    while (n < act.queue.length && n < this.opts.maxBatch && batches(act.queue[n].msg)) n++;
    return act.queue.splice(0, n);
  }

  private async processOne(id: string, act: Activation<S, M, R>, msg: M): Promise<Outcome<R>> {
    try {
      return { ok: true, reply: await this.process(id, act, msg) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** The store's state doc, loaded unless this is a create's first try; cached until a write fails. */
  private async load(id: string, act: Activation<S, M, R>, attempt: number, msg: M): Promise<S | null> {
    if (!act.loaded) {
      act.state = attempt === 1 && this.behavior.creates?.(msg) ? null : await this.store.get<S>(this.behavior.collection, id);
      if (this.behavior.keepsState) freezeDeep(act.state);
      act.loaded = true;
    }
    return act.state;
  }

  /** the actor's own document as the write leaves it */
  private stateOp(id: string, current: S | null, next: S): WriteOp {
    const doc = { ...next, id };
    return current
      ? { op: 'cas', coll: this.behavior.collection, doc, expected: current.version ?? 0 }
      : { op: 'insert', coll: this.behavior.collection, doc };
  }

  /** the state a committed write leaves, as the host caches it (frozen for a behaviour that keeps its state) */
  private cached(doc: S): S {
    return this.behavior.keepsState ? freezeDeep(doc) : doc;
  }

  /** A write's failure: drops the cached state, and tells whether another writer got there first. */
  private lostRace(act: Activation<S, M, R>, current: S | null, e: unknown): boolean {
    act.loaded = false; // reload and decide again (or next time)
    const dupColl = isDuplicate(e) ? e.coll : null;
    return (
      isConflict(e) ||
      (dupColl !== null && ((!current && dupColl === this.behavior.collection) || !!this.behavior.retryDuplicatesIn?.includes(dupColl)))
    );
  }

  /**
   * Runs a read-decide-write step, again after a lost race (another node wrote first: the cached state is
   * dropped, reloaded and decided on again); any other failure goes to the caller. The step writes
   * through `write`, which tells the two apart.
   */
  private retrying<T>(
    act: Activation<S, M, R>,
    step: (attempt: number, write: (current: S | null, ops: WriteOp[]) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const lost = new WeakSet<object>();
    let last: unknown;
    const write = async (current: S | null, ops: WriteOp[]) => {
      try {
        await this.store.write(ops);
      } catch (e) {
        if (this.lostRace(act, current, e) && e && typeof e === 'object') lost.add(e);
        last = e;
        throw e;
      }
    };
    return retryOnConflict((attempt) => step(attempt, write), {
      attempts: this.opts.maxRetries + 1,
      retryOn: (e: unknown) => !!e && typeof e === 'object' && lost.has(e),
      // jittered backoff, so that two holders of one actor stop colliding
      maxPauseMs: (n: number) => Math.min(50, 2 ** (n - 1)),
      exhausted: () => last as Error,
    });
  }

  private process(id: string, act: Activation<S, M, R>, msg: M): Promise<R> {
    return this.retrying(act, async (attempt, write) => {
      const current = await this.load(id, act, attempt, msg);
      // a behaviour that keeps its state is handed the cached (frozen) copy itself; any other one a deep copy
      const given = current && !this.behavior.keepsState ? structuredClone(current) : current;
      const decision = await this.behavior.handle(given, msg, this.opts.now());
      if (!decision.state && !decision.remove && !decision.effects?.length) return decision.reply;
      const ops: WriteOp[] = [];
      if (decision.remove && current) ops.push({ op: 'delete', coll: this.behavior.collection, id });
      else if (decision.state) ops.push(this.stateOp(id, current, decision.state));
      ops.push(...(decision.effects ?? []));
      await write(current, ops);
      act.state = decision.remove ? null : decision.state ? this.cached((ops[0] as { doc: Doc }).doc as S) : current;
      return decision.reply;
    });
  }

  /**
   * One turn over several messages, all committed in one write (retried whole on a lost race). When that
   * write is refused for any other reason, every message is decided alone instead.
   */
  private async processBatch(id: string, act: Activation<S, M, R>, batch: Queued<M, R>[]): Promise<Outcome<R>[]> {
    try {
      return await this.retrying(act, async (attempt, write) => {
        const current = await this.load(id, act, attempt, batch[0].msg);
        const { out, state, set } = await this.decideAll(current, batch);
        const ops = state ? [this.stateOp(id, current, state), ...set.ops()] : set.ops();
        if (ops.length) await write(current, ops);
        act.state = state ? this.cached((ops[0] as { doc: Doc }).doc as S) : current;
        return out;
      });
    } catch {
      return batch.map(() => ({ ok: 'alone' as const }));
    }
  }

  /**
   * Decides each message against the state and the store view (a write set) that the ones before it
   * leave. A message whose writes cannot follow the others' in the set is left to be decided alone.
   * `state`: the state after the batch, null when no message changed it.
   */
  private async decideAll(current: S | null, batch: Queued<M, R>[]): Promise<{ out: Outcome<R>[]; state: S | null; set: WriteSet }> {
    const set = new WriteSet(this.store);
    const now = this.opts.now();
    const out: Outcome<R>[] = [];
    let state: S | null = null;
    // a behaviour that never changes its input is handed the cached state (frozen, so that a change by mistake
    // throws instead of corrupting the cache) and each decision's state as they are; any other a deep copy
    const keeps = this.behavior.keepsState === true;
    for (const { msg } of batch) {
      const seen = state ?? current;
      const given = !seen ? null : keeps ? seen : structuredClone(seen);
      let decision;
      try {
        decision = await this.behavior.handle(given, msg, now, set.view);
      } catch (error) {
        out.push({ ok: false, error });
        continue;
      }
      try {
        if (decision.remove) throw new Error('a batched message cannot remove its actor');
        set.add(decision.effects ?? []);
      } catch {
        out.push({ ok: 'alone' });
        continue;
      }
      if (decision.state) state = decision.state;
      out.push({ ok: true, reply: decision.reply });
    }
    return { out, state, set };
  }

  private deactivateIdle(): void {
    const cutoff = Date.now() - this.opts.idleMs;
    for (const [id, act] of this.active) {
      if (act.pending === 0 && act.lastUsed < cutoff) this.active.delete(id);
    }
  }

  /** Map order is activation order: the oldest idle activations go first (in a batch: trimOldest). */
  private evictOverflow(): void {
    trimOldest(this.active, this.opts.maxActive, (act) => act.pending === 0);
  }

  stop(): void {
    clearInterval(this.timer);
    this.active.clear();
  }
}
