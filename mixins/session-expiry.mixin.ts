/**
 * The payment-session expiry scanner. Expiry is a persisted due time (`expiry_due_at`), not a timer: on
 * every node that runs this service, a tick atomically claims the open sessions whose due time has passed
 * (the claim pushes their due time by a lease, so other nodes skip them) and sends each one `{type:'expire'}`.
 * A session whose node is gone still expires; a message that arrives twice is harmless; a failed send is
 * retried when the lease ends. Period: SESSION_SCAN_INTERVAL_MS.
 *
 * It runs inside the `sessions` service (a mixin), so every node that serves the sessions API also
 * scans; `sessions.scanExpired` runs one scan at once (operators, tests).
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { OPEN_STATUSES, type PaymentSessionState, type SessionMsg } from '../actors/payment-session.ts';

const LEASE_MS = 60_000;
const BATCH = 100;
const PARALLEL = 10;

export function sessionExpiryMixin(rt: Runtime): Partial<ServiceSchema> {
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let stopped = false;

  return {
    actions: {
      /** Runs one scan now (tests, operators); returns how many sessions were sent `expire`. */
      scanExpired: {
        visibility: 'public',
        handler(this: { scanOnce(): Promise<number> }) {
          return this.scanOnce();
        },
      },
    },
    methods: {
      async scanOnce(this: { broker: { call(a: string, p: unknown): Promise<unknown> }; logger: { warn(...a: unknown[]): void } }): Promise<number> {
        let total = 0;
        for (;;) {
          const due = await rt.store.claimDue<PaymentSessionState>('payment_sessions', {
            dueField: 'expiry_due_at', filter: { status: { $in: OPEN_STATUSES } }, now: rt.now(), leaseMs: LEASE_MS, limit: BATCH,
          });
          for (let i = 0; i < due.length; i += PARALLEL) {
            await Promise.all(due.slice(i, i + PARALLEL).map(async (s) => {
              const msg: SessionMsg = { type: 'expire' };
              try {
                await this.broker.call('session-actors.send', { id: s.id, msg });
              } catch (e) {
                this.logger.warn(`expiry of ${s.id} failed, retried after the lease:`, (e as Error).message);
              }
            }));
          }
          total += due.length;
          if (due.length < BATCH || stopped) return total;
        }
      },
    },
    started(this: { scanOnce(): Promise<number>; logger: { warn(...a: unknown[]): void } }) {
      stopped = false;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        this.scanOnce()
          .catch((e) => this.logger.warn('session expiry scan failed:', (e as Error).message))
          .finally(() => { running = false; });
      }, rt.config.sessionScanIntervalMs);
      timer.unref();
    },
    stopped() {
      stopped = true;
      if (timer) clearInterval(timer);
    },
  } as unknown as Partial<ServiceSchema>;
}
