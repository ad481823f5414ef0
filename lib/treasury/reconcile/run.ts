/**
 * One reconciliation run of one chain and network, in the order that keeps it exact: the final outbox
 * rows not yet checked (check 1 and the movements' platform money, movements.ts), the blocks or
 * signatures since the cursor (transfers out without a row, outgoing.ts), then the balances of the
 * platform's addresses at one stated height (check 2, addresses.ts, and the gas wallet: check 3).
 *
 * Two modes:
 * - `deep` (the operator's `reconcile --deep`): every wallet, every deposit address still holding
 *   deposits, the gas wallet, every block or signature since the cursor; the report lists every drift on
 *   record (rows and movements checked before included), not only the new ones;
 * - `tick` (the scanner): the gas wallet, the addresses the new rows touched, deposit addresses holding
 *   deposits and the next `addressBudget` wallets in turn (so every wallet comes round), at most
 *   `maxBlocks` blocks; the report lists the drifts found in this run and the balance drifts now.
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
import { RECON_GROUPS, RECON_ROWS, readState, writeState, type ReconGroupDoc, type ReconRowDoc } from './records.ts';
import { driftLine, type Drift } from './drift.ts';

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
  drifts: Drift[];
  error: string | null;
}

export interface ReconcileReport {
  ok: boolean;
  mode: 'deep' | 'tick';
  at: string;
  networks: NetworkReport[];
  drifts: Drift[];
}

interface WalletRow extends Doc {
  merchant_id: string;
  chain: string;
  network: string;
  address: string;
}

export async function reconcileNetworks(d: ReconcileDeps, opts: RunOptions): Promise<ReconcileReport> {
  const now = d.now ?? (() => new Date());
  const networks: NetworkReport[] = [];
  for (const { chain, network } of configuredNetworks(d.config)) {
    const rpc = d.rpc?.(chain, network);
    const view = new NetworkView({ chain, network, store: d.store, config: d.config, keys: d.keys, rpc });
    networks.push(await reconcileNetwork(view, now, opts));
  }
  const drifts = networks.flatMap((n) => n.drifts);
  return { ok: drifts.length === 0 && networks.every((n) => !n.error), mode: opts.mode, at: now().toISOString(), networks, drifts };
}

export async function reconcileNetwork(view: NetworkView, now: () => Date, opts: RunOptions): Promise<NetworkReport> {
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
    error: null,
  };
  try {
    const deep = opts.mode === 'deep';
    const moves = await new MovementCheck({ view, now }).run();
    report.rows_checked = moves.rows;
    report.movements_checked = moves.groups;
    const addresses = new AddressCheck(view, now);
    const wallets = deep ? await allWallets(view) : await someWallets(view, moves.touched, opts.addressBudget ?? 50, now);
    const outgoing = await new OutgoingScan(view, now).run({
      maxBlocks: opts.maxBlocks ?? (deep ? Number.MAX_SAFE_INTEGER : 200),
      addresses: [view.gas, ...wallets.map((w) => w.address)],
    });
    report.scanned = outgoing.scanned;
    const targets: AddressTarget[] = [{ kind: 'gas', address: view.gas }, ...wallets, ...(await addresses.depositTargets())];
    const a = await addresses.run(targets);
    report.height = a.height;
    report.addresses_checked = a.checked;
    report.surplus = a.surplus;
    report.calibrated = a.calibrated;
    const found = [...moves.drifts, ...outgoing.drifts];
    report.drifts = deep ? [...(await recorded(view)), ...a.drifts] : [...found, ...a.drifts];
  } catch (e) {
    report.error = rpcErrorText(e, 300);
  }
  report.rpc_calls = view.rpc.calls - calls0;
  report.rpc_requests = view.rpc.requests - req0;
  report.ms = Date.now() - started;
  return report;
}

/** every drift on record for the network: rows, transfers out and movements checked in any run */
async function recorded(view: NetworkView): Promise<Drift[]> {
  const f = { status: 'drift', chain: view.chain, network: view.network };
  const rows = await view.store.find<ReconRowDoc>(RECON_ROWS, f);
  const groups = await view.store.find<ReconGroupDoc>(RECON_GROUPS, f);
  return [...rows.flatMap((r) => r.drifts), ...groups.flatMap((g) => g.drifts)];
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

/** The operator's text: per network the stated height and what was read, then one line per drift. */
export function reconcileText(r: ReconcileReport): string {
  const lines = [
    `reconciliation (${r.mode}) at ${r.at}: ${r.ok ? 'clean' : `${r.drifts.length} drift${r.drifts.length === 1 ? '' : 's'}`}`,
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
  return lines.join('\n');
}
