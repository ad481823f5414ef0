/**
 * Reconciliation's metrics, registered once per node registry.
 *
 * `reconciliation_drift_subunits` names each open drift (check, code, row, address, asset) with its
 * difference as the value: a label set per drift is high-cardinality by design, but it exists only while
 * the drift is open (the series of a network are replaced on every run by its open drifts on record; a
 * resolved or acknowledged drift has none) and at most MAX_DRIFT_SERIES of them per network; the rest are
 * counted in `reconciliation_drifts` only.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { perRegistry } from '../../runtime/metrics.ts';
import type { Drift } from './drift.ts';
import type { NetworkReport } from './run.ts';

export const MAX_DRIFT_SERIES = 50;

export interface ReconcileMetrics {
  runs: Counter<'chain' | 'network' | 'mode' | 'outcome'>;
  drifts: Gauge<'chain' | 'network' | 'check'>;
  drift: Gauge<'chain' | 'network' | 'check' | 'code' | 'row' | 'address' | 'asset'>;
  height: Gauge<'chain' | 'network'>;
  rpcCalls: Counter<'chain' | 'network'>;
  seconds: Gauge<'chain' | 'network' | 'mode'>;
  /** the drift label sets set per network by the last run (to remove them on the next) */
  series: Map<string, Array<ReturnType<typeof driftLabels>>>;
}

export const reconcileMetrics = perRegistry((registry: Registry): ReconcileMetrics => {
  const registers = [registry];
  return {
    runs: new Counter({
      name: 'reconciliation_runs_total',
      help: 'Reconciliation runs by outcome (clean, drift, error)',
      labelNames: ['chain', 'network', 'mode', 'outcome'],
      registers,
    }),
    drifts: new Gauge({
      name: 'reconciliation_drifts',
      help: 'Open drifts between the books and the chain on record after the last run, per check (acknowledged and resolved ones not counted)',
      labelNames: ['chain', 'network', 'check'],
      registers,
    }),
    drift: new Gauge({
      name: 'reconciliation_drift_subunits',
      help: 'One series per current drift: chain minus books in the asset smallest unit, labelled with its row and address',
      labelNames: ['chain', 'network', 'check', 'code', 'row', 'address', 'asset'],
      registers,
    }),
    height: new Gauge({
      name: 'reconciliation_height',
      help: 'The block (Ethereum) or slot (Solana) the last run compared balances at',
      labelNames: ['chain', 'network'],
      registers,
    }),
    rpcCalls: new Counter({
      name: 'reconciliation_rpc_calls_total',
      help: 'RPC calls made by reconciliation',
      labelNames: ['chain', 'network'],
      registers,
    }),
    seconds: new Gauge({
      name: 'reconciliation_last_run_seconds',
      help: 'Duration of the last reconciliation run',
      labelNames: ['chain', 'network', 'mode'],
      registers,
    }),
    series: new Map(),
  };
});

/** the metrics of one network's run: its drift series replace the previous run's */
export function recordRun(m: ReconcileMetrics, r: NetworkReport, mode: 'deep' | 'tick'): void {
  const net = { chain: r.chain, network: r.network };
  m.runs.inc({ ...net, mode, outcome: r.error ? 'error' : r.drifts.length ? 'drift' : 'clean' });
  m.rpcCalls.inc(net, r.rpc_calls);
  m.seconds.set({ ...net, mode }, r.ms / 1000);
  if (r.error) return;
  if (r.height !== null) m.height.set(net, r.height);
  for (const check of ['movement', 'address', 'platform', 'outgoing'] as const)
    m.drifts.set({ ...net, check }, r.open.filter((d) => d.check === check).length);
  setSeries(m, `${r.chain}:${r.network}`, r.open);
}

/** this network's series of the previous run go (the other networks' stay); the open drifts' are set */
function setSeries(m: ReconcileMetrics, key: string, open: Drift[]): void {
  for (const labels of m.series.get(key) ?? []) m.drift.remove(labels);
  const now = open.slice(0, MAX_DRIFT_SERIES).map(driftLabels);
  open.slice(0, MAX_DRIFT_SERIES).forEach((d, i) => m.drift.set(now[i]!, Number(d.difference ?? 0)));
  m.series.set(key, now);
}

/** an acknowledged drift stops alerting at once on this node: its series goes (other nodes: at their next run) */
export function dropSeries(m: ReconcileMetrics, d: Drift): void {
  const key = `${d.chain}:${d.network}`;
  const labels = driftLabels(d);
  const same = (l: ReturnType<typeof driftLabels>) => (Object.keys(labels) as Array<keyof typeof labels>).every((k) => l[k] === labels[k]);
  const kept = (m.series.get(key) ?? []).filter((l) => !same(l));
  m.drift.remove(labels);
  m.series.set(key, kept);
}

const driftLabels = (d: Drift) => ({
  chain: d.chain,
  network: d.network,
  check: d.check,
  code: d.code,
  row: d.row ?? '',
  address: d.address ?? '',
  asset: d.asset ?? '',
});
