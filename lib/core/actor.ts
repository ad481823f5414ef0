/**
 * What an actor's behaviour is: a pure decision from the current state and one message (the next state,
 * the writes committed with it, the reply). The actor runtime (actors/runtime.ts) hosts and persists it;
 * the behaviours themselves live in their domains (lib/sessions/, lib/merchants/, lib/agents/).
 */
import type { Doc, Store, WriteOp } from '../store/port.ts';

export interface Decision<S extends Doc, R> {
  /** the actor's next state; omitted when the message changes nothing */
  state?: S;
  /** writes committed atomically with the state (outbox rows, audit events, derived records) */
  effects?: WriteOp[];
  /** delete the actor's document instead of writing a state */
  remove?: boolean;
  reply: R;
}

export interface ActorBehavior<S extends Doc, M, R> {
  collection: string;
  /**
   * collections whose duplicate key on an effect means another writer got there first (a ledger account
   * created concurrently): reload and decide again, like a version conflict
   */
  retryDuplicatesIn?: string[];
  /**
   * decides from the current state (null when the actor has no document yet); must not write. `view`, when
   * given, is the store to read from: in a batch it shows what the decisions before this one will write.
   */
  handle(state: S | null, msg: M, now: Date, view?: Store): Decision<S, R> | Promise<Decision<S, R>>;
  /**
   * True for a message that may be decided in one turn with the others queued behind it (each against the
   * state the ones before it leave, all committed in one write). Such a message must read only through
   * `view.get` and must not remove the actor.
   */
  batches?(msg: M): boolean;
  /**
   * True when `handle` never changes the state it is given (it returns a new one): a batched turn hands
   * its messages one copy of the stored state, and each the state the one before it returned, instead of
   * a deep copy each.
   */
  keepsState?: boolean;
  /**
   * True for a message that makes the actor under a fresh id: the host skips loading a document that
   * cannot exist yet. If it exists after all (a retried create), the insert's duplicate key makes the
   * host load it and decide again.
   */
  creates?(msg: M): boolean;
}
