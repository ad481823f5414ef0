/**
 * The payment-session expiry scanner. Expiry is a persisted due time (`expiry_due_at`), not a timer: on
 * every node that runs this service, the due-scanner (lib/core/due-scanner.ts) claims the open sessions
 * whose due time has passed (the claim pushes their due time by a lease, so other nodes skip them) and
 * sends each one `{type:'expire'}`. A session whose node is gone still expires; a message that arrives
 * twice is harmless; a failed send is retried when the lease ends. Period: SESSION_SCAN_INTERVAL_MS.
 *
 * It runs inside the `sessions` service (a mixin), so every node that serves the sessions API also
 * scans; `sessions.scanExpired` runs one scan at once (operators, tests).
 */
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { OPEN_STATUSES, type PaymentSessionState, type SessionMsg } from '../lib/sessions/payment-session.ts';

const LEASE_MS = 60_000;

export function sessionExpiryMixin(rt: Runtime): Partial<ServiceSchema> {
  let scanner: DueScanner<PaymentSessionState> | null = null;

  return {
    actions: {
      /** Runs one scan now (tests, operators); returns how many sessions were sent `expire`. */
      scanExpired: {
        visibility: 'public',
        handler() {
          return scanner?.scanOnce() ?? 0;
        },
      },
    },
    created(this: { broker: ServiceBroker; logger: { warn(...a: unknown[]): void } }) {
      const broker = this.broker;
      scanner = new DueScanner<PaymentSessionState>({
        name: 'session expiry',
        store: rt.store,
        coll: 'payment_sessions',
        dueField: 'expiry_due_at',
        filter: { status: { $in: OPEN_STATUSES } },
        leaseMs: LEASE_MS,
        intervalMs: rt.config.sessionScanIntervalMs,
        batch: 100,
        parallel: 10,
        now: () => rt.now(),
        log: this.logger,
        async handle(s) {
          const msg: SessionMsg = { type: 'expire' };
          await broker.call('session-actors.send', { id: s.id, msg });
        },
      });
    },
    started() {
      scanner?.start();
    },
    async stopped() {
      await scanner?.stop();
    },
  };
}
