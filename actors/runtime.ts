/**
 * The actor runtime: one message at a time per actor id (a bounded mailbox), the store as the truth
 * (every write is a compare-and-set on the actor's version; a lost race drops the cached copy, reloads
 * and retries the message), and idle deactivation so memory stays bounded.
 */
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../lib/store/port.ts';
import { REMEDIATION, rateLimited } from '../lib/core/errors.ts';
import { retryOnConflict } from '../lib/core/retry.ts';
import type { ActorBehavior } from '../lib/core/actor.ts';

export interface ActorHostOptions {
  /** messages waiting per actor before a 429 */
  mailboxSize?: number;
  /** an actor untouched this long is deactivated */
  idleMs?: number;
  /** at most this many actors stay in memory */
  maxActive?: number;
  maxRetries?: number;
  now?: () => Date;
  /** called when an actor is loaded into memory (metrics) */
  onActivate?: () => void;
}

interface Activation<S> {
  state: S | null;
  loaded: boolean;
  tail: Promise<unknown>;
  pending: number;
  lastUsed: number;
}

export class ActorHost<S extends Doc, M, R> {
  private active = new Map<string, Activation<S>>();
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
      act = { state: null, loaded: false, tail: Promise.resolve(), pending: 0, lastUsed: Date.now() };
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
    const run = a.tail.then(() => this.process(id, a, msg));
    a.tail = run
      .catch(() => undefined)
      .finally(() => {
        a.pending--;
        a.lastUsed = Date.now();
      });
    return run;
  }

  private async process(id: string, act: Activation<S>, msg: M): Promise<R> {
    // a lost race (another node wrote first) is retried on the core helper; `lost` carries the store's error
    const lost = new WeakSet<object>();
    let last: unknown;
    return retryOnConflict(
      async (attempt) => {
        if (!act.loaded) {
          act.state = attempt === 1 && this.behavior.creates?.(msg) ? null : await this.store.get<S>(this.behavior.collection, id);
          act.loaded = true;
        }
        const current = act.state;
        const decision = await this.behavior.handle(current ? structuredClone(current) : null, msg, this.opts.now());
        if (!decision.state && !decision.remove && !decision.effects?.length) return decision.reply;
        const ops: WriteOp[] = [];
        if (decision.remove && current) ops.push({ op: 'delete', coll: this.behavior.collection, id });
        else if (decision.state) {
          const doc = { ...decision.state, id };
          ops.push(
            current
              ? { op: 'cas', coll: this.behavior.collection, doc, expected: current.version ?? 0 }
              : { op: 'insert', coll: this.behavior.collection, doc },
          );
        }
        ops.push(...(decision.effects ?? []));
        try {
          await this.store.write(ops);
        } catch (e) {
          act.loaded = false; // reload and decide again (or next time)
          const dupColl = isDuplicate(e) ? e.coll : null;
          const lostRace =
            isConflict(e) ||
            (dupColl !== null &&
              ((!current && dupColl === this.behavior.collection) || !!this.behavior.retryDuplicatesIn?.includes(dupColl)));
          if (lostRace && e && typeof e === 'object') lost.add(e);
          last = e;
          throw e;
        }
        act.state = decision.remove ? null : decision.state ? ((ops[0] as { doc: Doc }).doc as S) : current;
        return decision.reply;
      },
      {
        attempts: this.opts.maxRetries + 1,
        retryOn: (e) => !!e && typeof e === 'object' && lost.has(e),
        // jittered backoff, so that two holders of one actor stop colliding
        maxPauseMs: (n) => Math.min(50, 2 ** (n - 1)),
        exhausted: () => last as Error,
      },
    );
  }

  private deactivateIdle(): void {
    const cutoff = Date.now() - this.opts.idleMs;
    for (const [id, act] of this.active) {
      if (act.pending === 0 && act.lastUsed < cutoff) this.active.delete(id);
    }
  }

  /** Map order is activation order: the oldest idle activations go first. */
  private evictOverflow(): void {
    if (this.active.size <= this.opts.maxActive) return;
    for (const [id, act] of this.active) {
      if (this.active.size <= this.opts.maxActive) break;
      if (act.pending === 0) this.active.delete(id);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.active.clear();
  }
}
