/**
 * Payment-session expiry. Expiry is a persisted due time (`expiry_due_at`), not a timer: on every node that
 * runs the scanner, the due-scanner (lib/core/due-scanner.ts) claims the open sessions whose due time has
 * passed (the claim pushes their due time by a lease, so other nodes skip them) and sends each one
 * `{type:'expire'}`. A session whose node is gone still expires; a message that arrives twice is harmless;
 * a failed send is retried when the lease ends. Hosted by mixins/session-expiry.mixin.ts.
 */
import type { Store } from '../store/port.ts';
import { DueScanner } from '../core/due-scanner.ts';
import { OPEN_STATUSES, type PaymentSessionState, type SessionMsg } from './payment-session.ts';

const LEASE_MS = 60_000;

export interface SessionExpiryDeps {
  store: Store;
  /** SESSION_SCAN_INTERVAL_MS */
  intervalMs: number;
  now: () => Date;
  log: { warn(...a: unknown[]): void };
  /** delivers a message to the session's actor */
  send(id: string, msg: SessionMsg): Promise<unknown>;
}

export function sessionExpiryScanner(deps: SessionExpiryDeps): DueScanner<PaymentSessionState> {
  return new DueScanner<PaymentSessionState>({
    name: 'session expiry',
    store: deps.store,
    coll: 'payment_sessions',
    dueField: 'expiry_due_at',
    filter: { status: { $in: OPEN_STATUSES } },
    leaseMs: LEASE_MS,
    intervalMs: deps.intervalMs,
    batch: 100,
    parallel: 10,
    now: deps.now,
    log: deps.log,
    async handle(s) {
      await deps.send(s.id, { type: 'expire' });
    },
  });
}
