/**
 * Treasury: the platform gas wallets and reconciliation of ledger and chain, for operators
 * (`npm run operator -- gas-wallets`, `… reconcile [--deep [--all]]`, `… reconcile:ack <drift_id> --reason
 * "…"`). No timers: an operator node runs it too (the continuous reconciliation scanner runs with money-out).
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';
import { GasWallets } from '../lib/treasury/gas-wallet.ts';
import { moneyOutMetrics } from '../lib/chains/metrics.ts';
import { reconcile } from '../lib/treasury/reconcile/wallets.ts';
import { reconcileNetworks } from '../lib/treasury/reconcile/run.ts';
import { dropSeries, recordRun, reconcileMetrics } from '../lib/treasury/reconcile/metrics.ts';
import { reconciliationDrift, resolveReconciliationDrift } from '../lib/ops/alerts/index.ts';
import { DRIFT_ID, acknowledgeDrift, driftView } from '../lib/treasury/reconcile/registry.ts';
import { auditOp } from '../lib/core/audit.ts';
import { badRequest, conflict, notFound } from '../lib/core/errors.ts';
import { looksSecret } from '../lib/ops/alerts/payload.ts';

/** who acknowledges: an operator's name or login, as the operator command passes it */
const ACK_BY = /^[A-Za-z0-9._@+-]{1,64}$/;
const MAX_REASON = 500;

type Log = { warn(...a: unknown[]): void };

export function createTreasuryService(rt: Runtime): ServiceSchema {
  let keys: KeyDeriver | null = null;
  let gas: GasWallets | null = null;
  const deriver = () => (keys ??= new KeyDeriver(loadSeedPhrase(rt.config.dataDir).phrase));
  const gasWallets = (log: Log) => {
    gas ??= new GasWallets({ config: rt.config, keys: deriver(), metrics: moneyOutMetrics(rt.metrics.registry), log });
    return gas;
  };
  return {
    name: 'treasury',
    actions: {
      /** one entry per chain and network with rails: address, balance, low */
      gasWallets: {
        visibility: 'public',
        handler(this: { logger: Log }) {
          return gasWallets(this.logger).list();
        },
      },
      /**
       * every wallet's ledger balance against its on-chain balance: {checked, differences, skipped}; with
       * `deep`, every check of lib/treasury/reconcile (movements, addresses at a stated height, platform
       * money, transfers out) with its drifts raised as alerts
       */
      reconcile: {
        visibility: 'public',
        async handler(this: { logger: Log }, ctx: Context<{ deep?: boolean; all?: boolean }>) {
          if (!ctx.params?.deep) return reconcile({ store: rt.store, config: rt.config });
          const report = await reconcileNetworks(
            { store: rt.store, config: rt.config, keys: deriver(), now: () => rt.now() },
            { mode: 'deep', all: ctx.params.all === true },
          );
          const metrics = reconcileMetrics(rt.metrics.registry);
          for (const n of report.networks) recordRun(metrics, n, 'deep');
          for (const d of report.drifts) await reconciliationDrift(rt, d, this.logger);
          for (const d of report.resolved) await resolveReconciliationDrift(rt, d, 'resolved', this.logger);
          return report;
        },
      },
      /**
       * An operator acknowledges a drift that is understood: it stays on record, listed by `reconcile
       * --deep --all`, and stops alerting (its open alert resolves as acknowledged, its metric series
       * goes, later runs raise nothing for it) until it is found with another difference. Who and why go
       * to the audit trail (platform chain) in the same write; a reason that looks like a credential is
       * refused, so none reaches the trail.
       */
      ackDrift: {
        visibility: 'public',
        async handler(this: { logger: Log }, ctx: Context<{ drift_id?: unknown; reason?: unknown; by?: unknown }>) {
          const id = String(ctx.params?.drift_id ?? '');
          if (!DRIFT_ID.test(id))
            throw badRequest('drift_id must be a drift id as reconcile --deep prints it (id=drf_…)', { field: 'drift_id' });
          const reason = typeof ctx.params?.reason === 'string' ? ctx.params.reason.trim() : '';
          if (!reason || reason.length > MAX_REASON)
            throw badRequest(`--reason is required: why this drift is understood, 1 to ${MAX_REASON} characters`, { field: 'reason' });
          // eslint-disable-next-line no-control-regex -- control characters are what this refuses
          if (/[\u0000-\u001f\u007f]/.test(reason) || looksSecret(reason))
            throw badRequest('the reason must be plain words without a key, secret, signature or seed in it', { field: 'reason' });
          const by = typeof ctx.params?.by === 'string' ? ctx.params.by : '';
          if (!ACK_BY.test(by)) throw badRequest('by must name the operator (letters, digits and . _ @ + -, up to 64)', { field: 'by' });
          const at = rt.now().toISOString();
          const done = await acknowledgeDrift(rt.store, id, by, reason, at, (rec) => [
            auditOp(
              'operator.reconciliation_drift.acknowledged',
              {
                drift_id: rec.id,
                code: rec.code,
                chain: rec.chain,
                network: rec.network,
                row: rec.drift.row,
                address: rec.drift.address,
                asset: rec.drift.asset,
                difference: rec.drift.difference,
                by,
                reason,
              },
              at,
            ),
          ]);
          if (!done.ok && done.reason === 'not_found') throw notFound(`drift ${id}`);
          if (!done.ok)
            throw conflict(`drift ${id} is resolved (no longer found by run ${done.record!.resolved_by_run}): nothing to acknowledge`);
          await resolveReconciliationDrift(rt, done.record.drift, 'acknowledged', this.logger);
          dropSeries(reconcileMetrics(rt.metrics.registry), done.record.drift);
          return { drift: driftView(done.record), was: done.was };
        },
      },
    },
  };
}
