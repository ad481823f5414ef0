/**
 * One reconciliation run of one chain and network, in the order that keeps it exact: the final outbox
 * rows not yet checked (check 1 and the movements' platform money, movements.ts), the blocks or
 * signatures since the cursor (transfers out without a row, outgoing.ts), then the balances of the
 * platform's addresses at one stated height (check 2, addresses.ts, and the gas wallet: check 3).
 *
 * Before the new rows, the rows and movements on record with drifts are looked at again, and the
 * addresses of drifts on record are compared again; then every drift of the run goes on record
 * (registry.ts): found ones open (or stay acknowledged), the ones the run looked at and no longer found
 * resolve, naming this run.
 *
 * Two modes:
 * - `deep` (the operator's `reconcile --deep`): every wallet, every deposit address still holding
 *   deposits, the gas wallet, every block or signature since the cursor, every row on record with a
 *   drift; the report lists every open drift on record, not only the ones found now (`all`: the
 *   acknowledged and resolved ones too);
 * - `tick` (the scanner): the gas wallet, the addresses the new rows touched, deposit addresses holding
 *   deposits, the addresses of drifts on record and the next `addressBudget` wallets in turn (so every
 *   wallet comes round), at most `maxBlocks` blocks and `recheckRows` rows on record; the report lists the
 *   open drifts found in this run.
 */
import type { Config } from '../../../config/index.ts';
import type { Doc, Store } from '../../store/port.ts';
import type { KeyRef } from '../../chains/keys.ts';
import { rpcErrorText } from '../../chains/clients.ts';
import { MovementCheck } from './movements.ts';
import { AddressCheck, type AddressLine, type AddressTarget } from './addresses.ts';
import { OutgoingScan } from './outgoing.ts';
import { NetworkView, configuredNetworks, type Chain, type Network } from './network.ts';
import { JsonRpc } from './rpc.ts';
import { readState, writeState } from './records.ts';
import { driftLine } from './drift.ts';
import { newId } from '../../core/ids.ts';
import type { RunMark } from './lifecycle.ts';
import { driftView, driftsOnRecord, syncDrifts, type DriftRecordDoc, type DriftView } from './registry.ts';

export interface ReconcileDeps {
  store: Store;
  config: Pick<Config, 'rails' | 'chains'>;
  /** derives public addresses (the gas wallets) */
  keys: { address(ref: KeyRef): string };
  now?: () => Date;
  /** tests count or replace the RPC client of a network */
  rpc?: (chain: Chain, network: Network) => JsonRpc | undefined;
}

export interface RunOptions {
  mode: 'deep' | 'tick';
  /** tick: wallets checked per run besides the ones new rows touched (default 50) */
  addressBudget?: number;
  /** blocks read per run at most (default: deep unbounded, tick 200) */
  maxBlocks?: number;
  /** rows on record with drifts read again per run at most (default: deep all, tick 20) */
  recheckRows?: number;
  /** deep: list the acknowledged and resolved drifts on record too */
  all?: boolean;
}

export interface NetworkReport {
  chain: Chain;
  network: Network;
  /** the stated height of the balances: Ethereum block, Solana slot */
  height: number | null;
  height_kind: 'block' | 'slot';
  rows_checked: number;
  movements_checked: number;
  addresses_checked: number;
  /** Ethereum blocks or Solana signatures read for transfers out */
  scanned: number;
  /** more than the books at deposit addresses and the gas wallet (not a drift) */
  surplus: AddressLine[];
  calibrated: string[];
  rpc_calls: number;
  rpc_requests: number;
  ms: number;
  /** deep: every open drift on record; tick: the open drifts this run found (each raises its alert) */
  drifts: DriftView[];
  /** every open drift on record after this run (the metric series) */
  open: DriftView[];
  /** drifts this run looked at again and no longer found (each resolves its alert) */
  resolved: DriftView[];
  error: string | null;
}

export interface ReconcileReport {
  ok: boolean;
  mode: 'deep' | 'tick';
  /** this run's id: the one resolved drifts name */
  run_id: string;
  at: string;
  networks: NetworkReport[];
  drifts: DriftView[];
  resolved: DriftView[];
  /** with `all`: the acknowledged drifts and the resolved ones on record */
  acknowledged?: DriftView[];
  closed?: DriftView[];
}

interface WalletRow extends Doc {
  merchant_id: string;
  chain: string;
  network: string;
  address: string;
}

export async function reconcileNetworks(d: ReconcileDeps, opts: RunOptions): Promise<ReconcileReport> {
  const now = d.now ?? (() => new Date());
  // one run, one time: the report's and every record it resolves
  const started = now();
  const mark = { run: newId('rcr', started.getTime()), at: started.toISOString() };
  const networks: NetworkReport[] = [];
  for (const { chain, network } of configuredNetworks(d.config)) {
    const rpc = d.rpc?.(chain, network);
    const view = new NetworkView({ chain, network, store: d.store, config: d.config, keys: d.keys, rpc });
    networks.push(await reconcileNetwork(view, now, opts, mark));
  }
  const drifts = networks.flatMap((n) => n.drifts);
  const report: ReconcileReport = {
    ok: drifts.length === 0 && networks.every((n) => !n.error),
    mode: opts.mode,
    run_id: mark.run,
    at: mark.at,
    networks,
    drifts,
    resolved: networks.flatMap((n) => n.resolved),
  };
  if (opts.all) {
    report.acknowledged = (await driftsOnRecord(d.store, ['acknowledged'])).map(driftView);
    report.closed = (await driftsOnRecord(d.store, ['resolved'])).map(driftView);
  }
  return report;
}

export async function reconcileNetwork(
  view: NetworkView,
  now: () => Date,
  opts: RunOptions,
  mark: RunMark = { run: newId('rcr'), at: now().toISOString() },
): Promise<NetworkReport> {
  const started = Date.now();
  const calls0 = view.rpc.calls;
  const req0 = view.rpc.requests;
  const report: NetworkReport = {
    chain: view.chain,
    network: view.network,
    height: null,
    height_kind: view.chain === 'ethereum' ? 'block' : 'slot',
    rows_checked: 0,
    movements_checked: 0,
    addresses_checked: 0,
    scanned: 0,
    surplus: [],
    calibrated: [],
    rpc_calls: 0,
    rpc_requests: 0,
    ms: 0,
    drifts: [],
    open: [],
    resolved: [],
    error: null,
  };
  try {
    const deep = opts.mode === 'deep';
    const net = { chain: view.chain, network: view.network };
    const check = new MovementCheck({ view, now });
    // the rows and movements with drifts on record first: a fixed cause shows as no drift
    const again = await check.recheck(opts.recheckRows ?? (deep ? Number.POSITIVE_INFINITY : 20));
    const moves = await check.run();
    report.rows_checked = moves.rows;
    report.movements_checked = moves.groups;
    const addresses = new AddressCheck(view, now);
    const onRecord = await driftsOnRecord(view.store, ['open', 'acknowledged'], net);
    const listed = deep ? await allWallets(view) : await someWallets(view, moves.touched, opts.addressBudget ?? 50, now);
    const wallets = [...listed, ...recordedWallets(onRecord, listed)];
    const outgoing = await new OutgoingScan(view, now).run({
      maxBlocks: opts.maxBlocks ?? (deep ? Number.MAX_SAFE_INTEGER : 200),
      addresses: [view.gas, ...wallets.map((w) => w.address)],
    });
    report.scanned = outgoing.scanned;
    const deposits = await addresses.depositTargets();
    const targets: AddressTarget[] = [{ kind: 'gas', address: view.gas }, ...wallets, ...deposits, ...recordedDeposits(onRecord, deposits)];
    const a = await addresses.run(targets);
    report.height = a.height;
    report.addresses_checked = a.checked;
    report.surplus = a.surplus;
    report.calibrated = a.calibrated;
    const found = [...again.drifts, ...moves.drifts, ...outgoing.drifts, ...a.drifts];
    const lines = new Set(a.lines.map((l) => `${l.address}|${l.asset}`));
    const compared = new Set(targets.map((t) => t.address));
    // what this run looked at: a drift on record elsewhere keeps its state
    const examined = (r: DriftRecordDoc): boolean => {
      const d = r.drift;
      if (r.code === 'parked_below_zero') return true; // every parked account is read each run
      if (r.code === 'deposit_short') return !!d.address && compared.has(d.address);
      if (r.code === 'balance') return lines.has(`${d.address}|${d.asset}`);
      if (r.code === 'gas_wallet_short') return lines.has(`${d.address}|${d.asset}`) && !a.gasOpen;
      if (r.check === 'movement') return !!d.row && again.rows.has(d.row);
      if (r.check === 'platform') return !!d.row && again.groupRows.has(d.row);
      return false; // a transfer out without a row happened: it stays until acknowledged
    };
    const sync = await syncDrifts(view.store, net, found, examined, mark);
    report.open = (await driftsOnRecord(view.store, ['open'], net)).map(driftView);
    report.resolved = sync.resolved.map(driftView);
    report.drifts = deep ? report.open : sync.raise.map(driftView);
  } catch (e) {
    report.error = rpcErrorText(e, 300);
  }
  report.rpc_calls = view.rpc.calls - calls0;
  report.rpc_requests = view.rpc.requests - req0;
  report.ms = Date.now() - started;
  return report;
}

/** the wallets of balance drifts on record that the run does not compare already: compared again */
function recordedWallets(onRecord: DriftRecordDoc[], listed: AddressTarget[]): AddressTarget[] {
  const have = new Set(listed.map((t) => t.address));
  const out = new Map<string, AddressTarget>();
  for (const { drift: d } of onRecord) {
    if (d.code !== 'balance' || !d.address || !d.wallet_id || have.has(d.address)) continue;
    out.set(d.address, { kind: 'wallet', address: d.address, wallet_id: d.wallet_id, merchant_id: d.merchant_id ?? undefined });
  }
  return [...out.values()];
}

/** the deposit addresses of shortfalls on record no longer holding deposits: compared again (books: parked money only) */
function recordedDeposits(onRecord: DriftRecordDoc[], deposits: AddressTarget[]): AddressTarget[] {
  const have = new Set(deposits.map((t) => t.address));
  const out = new Map<string, AddressTarget>();
  for (const { drift: d } of onRecord) {
    if (d.code !== 'deposit_short' || !d.address || have.has(d.address)) continue;
    out.set(d.address, { kind: 'deposit', address: d.address, merchant_id: d.merchant_id ?? undefined, session_ids: [] });
  }
  return [...out.values()];
}

const walletTarget = (view: NetworkView, w: WalletRow): AddressTarget => ({
  kind: 'wallet',
  address: view.address(w.address),
  wallet_id: w.id,
  merchant_id: w.merchant_id,
});

async function allWallets(view: NetworkView): Promise<AddressTarget[]> {
  const out: AddressTarget[] = [];
  for (let after = ''; ;) {
    const page = await view.store.find<WalletRow>('wallets', after ? { id: { $gt: after } } : {}, { limit: 500 });
    for (const w of page) if (w.chain === view.chain && w.network === view.network) out.push(walletTarget(view, w));
    if (page.length < 500) return out;
    after = page[page.length - 1]!.id;
  }
}

/** the wallets the new rows touched and the next `budget` wallets after the stored turn */
async function someWallets(view: NetworkView, touched: Set<string>, budget: number, now: () => Date): Promise<AddressTarget[]> {
  const out = new Map<string, AddressTarget>();
  for (const [, c] of await view.controlled(touched)) {
    if (c.kind !== 'wallet') continue;
    const w = await view.store.get<WalletRow>('wallets', c.wallet_id!);
    if (w) out.set(c.address, walletTarget(view, w));
  }
  const id = `addresses:${view.key}`;
  const turn = await readState<Doc & { after: string }>(view.store, id);
  let after = turn?.after ?? '';
  let seen = 0;
  while (seen < budget) {
    const page = await view.store.find<WalletRow>('wallets', after ? { id: { $gt: after } } : {}, { limit: Math.min(500, budget) });
    for (const w of page) {
      after = w.id;
      if (w.chain !== view.chain || w.network !== view.network) continue;
      out.set(view.address(w.address), walletTarget(view, w));
      if (++seen >= budget) break;
    }
    if (page.length < Math.min(500, budget)) {
      after = ''; // round again next time
      break;
    }
  }
  await writeState(view.store, turn, { id, after, updated_at: now().toISOString() });
  return [...out.values()];
}

/**
 * The operator's text: per network the stated height and what was read, then one line per open drift,
 * one per drift this run resolved, and with `all` the acknowledged and resolved ones on record.
 */
export function reconcileText(r: ReconcileReport): string {
  const lines = [
    `reconciliation (${r.mode}) run ${r.run_id} at ${r.at}: ${r.ok ? 'clean' : `${r.drifts.length} open drift${r.drifts.length === 1 ? '' : 's'}`}`,
  ];
  for (const n of r.networks) {
    lines.push(
      `${n.chain} ${n.network} at ${n.height_kind} ${n.height ?? '?'}: ${n.rows_checked} new rows, ${n.movements_checked} movements, ${n.addresses_checked} address balances, ${n.scanned} ${n.chain === 'ethereum' ? 'blocks' : 'signatures'} read; ${n.rpc_calls} RPC calls (${n.rpc_requests} requests) in ${n.ms} ms`,
    );
    if (n.error) lines.push(`  error: ${n.error}`);
    for (const c of n.calibrated) lines.push(`  gas wallet ${c} calibrated: what it holds now is its opening balance`);
    for (const s of n.surplus)
      lines.push(
        `  surplus ${s.kind} ${s.address} ${s.asset}: +${s.difference} beyond the books (an orphan, an uncounted deposit or leftover gas; not a drift)`,
      );
  }
  for (const d of r.drifts) lines.push(driftLine(d));
  for (const d of r.acknowledged ?? [])
    lines.push(`${driftLine(d, 'ACKNOWLEDGED')} (by ${d.acknowledged_by} at ${d.acknowledged_at}: ${d.ack_reason})`);
  const now = new Set(r.resolved.map((d) => d.id));
  for (const d of [...r.resolved, ...(r.closed ?? []).filter((c) => !now.has(c.id))])
    lines.push(`${driftLine(d, 'RESOLVED')} (no longer found by run ${d.resolved_by_run} at ${d.resolved_at})`);
  return lines.join('\n');
}
