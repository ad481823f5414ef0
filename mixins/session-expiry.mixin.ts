/**
 * Hosts the payment-session expiry scanner (lib/sessions/expiry.ts) inside the `sessions` service, so every
 * node that serves the sessions API also scans; `sessions.scanExpired` runs one scan at once (operators,
 * tests). Period: SESSION_SCAN_INTERVAL_MS.
 */
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import type { DueScanner } from '../lib/core/due-scanner.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';
import { sessionExpiryScanner } from '../lib/sessions/expiry.ts';

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
      scanner = sessionExpiryScanner({
        store: rt.store,
        intervalMs: rt.config.sessionScanIntervalMs,
        now: () => rt.now(),
        log: this.logger,
        send: (id, msg) => broker.call('session-actors.send', { id, msg }),
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
