/** Operator commands, shared by the REPL (`npm run repl`) and the script (`npm run operator -- …`). */
import { hostname, userInfo } from 'node:os';
import type { ServiceBroker } from 'moleculer';
import { loadConfig } from '../config/index.ts';
import { startNode, type RunningNode } from '../app.ts';
import { localSocketLive, localSocketPath } from '../lib/cluster/local-socket.ts';
import { gasWalletLine, gasWalletWarning, type GasWalletInfo } from '../lib/treasury/gas-wallet.ts';
import type { LedgerReport } from '../lib/ledger/check.ts';
import { reconcileText, type ReconcileReport } from '../lib/treasury/reconcile/run.ts';
import { driftLine } from '../lib/treasury/reconcile/drift.ts';
import type { DriftView } from '../lib/treasury/reconcile/registry.ts';
import { backupStore, restoreStore } from '../lib/ops/backup.ts';
import type { BackupResult, RestoreResult } from '../lib/store/sqlite-backup.ts';

type Args = Record<string, string | undefined>;

interface CommandBase {
  name: string;
  args: string[];
  /** optional trailing arguments */
  optional?: string[];
  /** valued flags (`--reason "…"`), anywhere after the command name; read as args of their name */
  flags?: string[];
  description: string;
  /** prints the result as text instead of JSON */
  format?(result: unknown): string;
  /** lines for stderr (warnings beside a result whose stdout format is fixed) */
  warnings?(result: unknown): string[];
  /** the process exit code for a result (default 0): a check that found problems fails */
  exitCode?(result: unknown): number;
}

/** A service action called through the broker, or a command on this machine's files (backup, restore) that joins none. */
export type OperatorCommand = CommandBase &
  ({ action: string; params(args: Args): Record<string, unknown>; local?: undefined } | { local(args: Args): Promise<unknown> });

/** Who runs this operator command: the login of the process (and its host), in the audit trail's alphabet. */
function operatorName(): string {
  let login = 'operator';
  try {
    login = userInfo().username || login;
  } catch {
    // no passwd entry (some containers): the generic name
  }
  return `${login}@${hostname()}`.replace(/[^A-Za-z0-9._@+-]/g, '_').slice(0, 64);
}

/** One filter argument read as a merchant id, an ISO time (since) or a type, as alerts and audit take it. */
function byMerchantTimeOrType(a: Record<string, string | undefined>): Record<string, unknown> {
  const f = a.filter;
  const limit = a.limit ? Number(a.limit) : undefined;
  if (!f || f === 'all') return { limit };
  if (f.startsWith('mer_')) return { merchant_id: f, limit };
  if (/^\d{4}-\d{2}-\d{2}/.test(f)) return { since: f, limit };
  return { type: f, limit };
}

export const OPERATOR_COMMANDS: OperatorCommand[] = [
  {
    name: 'trust-email',
    args: ['email'],
    description: 'allow an email address to register',
    action: 'operators.trustEmail',
    params: (a) => ({ value: a.email }),
  },
  {
    name: 'untrust-email',
    args: ['email'],
    description: 'remove an email address from the allowlist',
    action: 'operators.untrustEmail',
    params: (a) => ({ value: a.email }),
  },
  {
    name: 'trust-domain',
    args: ['domain'],
    description: 'allow every address of a domain to register',
    action: 'operators.trustDomain',
    params: (a) => ({ value: a.domain }),
  },
  {
    name: 'untrust-domain',
    args: ['domain'],
    description: 'remove a domain from the allowlist',
    action: 'operators.untrustDomain',
    params: (a) => ({ value: a.domain }),
  },
  { name: 'list-trust', args: [], description: 'show the trusted emails and domains', action: 'operators.listTrust', params: () => ({}) },
  {
    name: 'invite',
    args: [],
    optional: ['email', 'days'],
    description: 'create an invitation token (shown once), optionally bound to an email',
    action: 'operators.createInvitation',
    params: (a) => ({ email: a.email, days: a.days ? Number(a.days) : undefined }),
  },
  {
    name: 'create-user',
    args: ['email'],
    optional: ['name'],
    description: 'create a user who registers live merchants with a bearer token (shown once)',
    action: 'operators.createUser',
    params: (a) => ({ email: a.email, name: a.name }),
  },
  {
    name: 'set-kyc',
    args: ['merchant_id', 'status'],
    description: "set a merchant's KYC status: none, pending, verified or rejected",
    action: 'operators.setKyc',
    params: (a) => ({ merchant_id: a.merchant_id, status: a.status }),
  },
  {
    name: 'deposits',
    args: [],
    optional: ['filter', 'limit'],
    description: 'chain deposits, newest first; filter: --orphans, a status (seen, credited, reverted, orphan) or a session id',
    action: 'operators.listDeposits',
    params: (a) => {
      const f = a.filter;
      const limit = a.limit ? Number(a.limit) : undefined;
      if (!f || f === 'all') return { limit };
      if (f === '--orphans' || f === 'orphans') return { orphans: true, limit };
      if (f.startsWith('ps_')) return { session_id: f, limit };
      return { status: f, limit };
    },
  },
  {
    name: 'alerts',
    args: [],
    optional: ['filter', 'limit'],
    description: 'operational alerts, newest first; filter: an alert type, a merchant id or an ISO time (since)',
    action: 'ops.alerts',
    params: byMerchantTimeOrType,
  },
  {
    name: 'sessions',
    args: ['merchant_id'],
    optional: ['status', 'limit'],
    description: "a merchant's payment sessions, newest first: status, rail, expected and received",
    action: 'ops.sessions',
    params: (a) => ({
      merchant_id: a.merchant_id,
      status: a.status && a.status !== 'all' ? a.status : undefined,
      limit: a.limit ? Number(a.limit) : undefined,
    }),
  },
  {
    name: 'audit',
    args: [],
    optional: ['filter', 'limit'],
    description: 'audit events, newest first; filter: a merchant id, an event type (or a prefix ending in "."), or an ISO time (since)',
    action: 'ops.audit',
    params: byMerchantTimeOrType,
  },
  {
    name: 'audit-verify',
    args: [],
    optional: ['merchant_id'],
    description: "verify the audit hash chains (every merchant's, or one): reports the first broken link of each",
    action: 'ops.auditVerify',
    params: (a) => ({ merchant_id: a.merchant_id }),
  },
  {
    name: 'listeners',
    args: [],
    description: "chain listeners: which node holds each network's lease, until when, and the Ethereum cursors",
    action: 'ops.listeners',
    params: () => ({}),
  },
  {
    name: 'gas-wallets',
    args: [],
    description: 'the platform gas wallets: one line per chain and network, `<chain> <network> <address> <balance>`',
    action: 'treasury.gasWallets',
    params: () => ({}),
    format: (r) => (r as GasWalletInfo[]).map(gasWalletLine).join('\n'),
    warnings: (r) => (r as GasWalletInfo[]).flatMap(gasWalletWarning),
  },
  {
    name: 'reconcile',
    args: [],
    optional: ['--deep', '--all'],
    description:
      "compare every wallet's ledger balance with its on-chain balance; --deep: every movement, address, gas wallet and transfer out at a stated height, one line per open drift (exit 1 on any); --all: the acknowledged and resolved drifts too",
    action: 'treasury.reconcile',
    params: (a) => {
      const given = new Set([a['--deep'], a['--all']]);
      return { deep: given.has('--deep') || given.has('deep') || given.has('--all'), all: given.has('--all') || given.has('all') };
    },
    format: (r) => ((r as ReconcileReport).mode ? reconcileText(r as ReconcileReport) : JSON.stringify(r, null, 2)),
    exitCode: (r) => ((r as ReconcileReport).mode && !(r as ReconcileReport).ok ? 1 : 0),
  },
  {
    name: 'reconcile:ack',
    args: ['drift_id'],
    flags: ['reason', 'by'],
    description:
      'acknowledge a drift that is understood (id=drf_… of reconcile --deep): it stops alerting and stays listed (--all); who (--by, default your login) and why go to the audit trail',
    action: 'treasury.ackDrift',
    params: (a) => ({ drift_id: a.drift_id, reason: a.reason, by: a.by ?? operatorName() }),
    format: (r) => {
      const { drift } = r as { drift: DriftView };
      return `${driftLine(drift, 'ACKNOWLEDGED')}\nacknowledged by ${drift.acknowledged_by} at ${drift.acknowledged_at}: ${drift.ack_reason}`;
    },
  },
  {
    name: 'ledger:check',
    args: [],
    description:
      'verify the ledger: per asset all balances sum to zero, no wallet below zero, every wallet transaction maps to exactly one transfer (exit 1 on a problem)',
    action: 'wallets.ledgerCheck',
    params: () => ({}),
    format: (r) => {
      const rep = r as LedgerReport;
      const c = rep.counts;
      const head = `ledger ${rep.ok ? 'ok' : 'FAILED'}: ${c.accounts} accounts, ${c.transfers} transfers, ${c.wallet_transactions} wallet transactions, ${c.assets} assets`;
      return [head, ...rep.problems.map((p) => `  problem: ${p}`)].join('\n');
    },
    exitCode: (r) => ((r as LedgerReport).ok ? 0 : 1),
  },
  {
    name: 'backup',
    args: ['file'],
    description: 'an online, consistent copy of the embedded store (SQLite) into a new file, while the service runs',
    local: (a) => backupStore(loadConfig(process.env), a.file!),
    format: (r) => {
      const b = r as BackupResult;
      return `backup written: ${b.file} (${b.bytes} bytes; ${rowLine(b.rows)}) in ${b.duration_ms} ms\nkeep the data dir's master.key and seed (or MASTER_KEY and SEED_MNEMONIC) safe apart from it: a restore needs them`;
    },
  },
  {
    name: 'restore',
    args: ['file'],
    description: 'restore a backup as the embedded store of a STOPPED data dir (the current store is kept beside it)',
    local: (a) => restoreStore(loadConfig(process.env), a.file!),
    format: (r) => {
      const x = r as RestoreResult;
      return [
        `restored ${x.restored_from} into ${x.store} (${rowLine(x.rows)})`,
        ...(x.previous_saved_as ? [`the store that was there is kept as ${x.previous_saved_as}`] : []),
        'start the service, then check it: npm run operator -- ledger:check; npm run operator -- reconcile',
      ].join('\n');
    },
  },
  {
    name: 'set-rate-limit',
    args: ['merchant_id', 'per_minute'],
    description: "set a merchant's requests per minute",
    action: 'operators.setRateLimit',
    params: (a) => ({ merchant_id: a.merchant_id, rate_limit_per_minute: Number(a.per_minute) }),
  },
];

/**
 * A node for operator work: in a cluster it joins over TRANSPORTER and runs nothing itself. Embedded,
 * with `joinRunningService` (the REPL) it joins the service running on this data dir through its local
 * socket (lib/cluster/local-socket.ts) and runs nothing itself either; otherwise (no service running, or
 * the operator script) it opens the same store (SQLite is safe for several processes) and runs the
 * operator and merchant-actor services locally. `joined` says which.
 */
export async function startOperatorNode(
  env = process.env,
  opts: { joinRunningService?: boolean } = {},
): Promise<RunningNode & { joined: 'cluster' | 'local-socket' | null }> {
  const base = loadConfig(env);
  const join = !base.transporter && opts.joinRunningService === true && (await localSocketLive(localSocketPath(base.dataDir)));
  const remote = Boolean(base.transporter) || join;
  const config = {
    ...base,
    nodeId: base.nodeId ? `${base.nodeId}-operator` : `operator-${process.pid}`,
    services: remote ? [] : ['operators', 'merchant-actors', 'treasury', 'ops', 'wallets'],
    logLevel: (env.LOG_LEVEL || 'warn') as typeof base.logLevel,
  };
  const node = await startNode(config, { defaultMetrics: false, ...(join ? { localSocket: 'join' as const } : {}) });
  if (remote)
    await node.broker.waitForServices(['operators'], 10_000).catch(async () => {
      await node.stop();
      throw new Error(
        `no operators service answered within 10 s ${join ? 'on the local socket' : 'over TRANSPORTER'}: is the service running with the same cluster key (CLUSTER_SECRET, or MASTER_KEY / DATA_DIR/master.key)?`,
      );
    });
  return Object.assign(node, { joined: base.transporter ? ('cluster' as const) : join ? ('local-socket' as const) : null });
}

/** `name <arg> [optional] --flag <flag>`, as usage and the REPL's help show a command. */
export function commandSynopsis(cmd: OperatorCommand): string {
  return [
    cmd.name,
    ...cmd.args.map((a) => `<${a}>`),
    ...(cmd.optional ?? []).map((a) => `[${a}]`),
    ...(cmd.flags ?? []).map((f) => `--${f} <${f}>`),
  ].join(' ');
}

/**
 * The values after a command's name as its args: `--flag value` pairs of its flags taken out first, the
 * rest by position. `positional` is what is left, for the usage check.
 */
export function commandArgs(cmd: OperatorCommand, values: string[]): { args: Args; positional: string[] } {
  const flags: Args = {};
  const positional: string[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const name = typeof v === 'string' && v.startsWith('--') ? v.slice(2).split('=')[0]! : '';
    if (name && cmd.flags?.includes(name)) {
      if (v.includes('=')) flags[name] = v.slice(v.indexOf('=') + 1);
      else flags[name] = values[++i];
      continue;
    }
    positional.push(v);
  }
  const names = [...cmd.args, ...(cmd.optional ?? [])];
  return { args: { ...Object.fromEntries(names.map((n, i) => [n, positional[i]])), ...flags }, positional };
}

export function runCommand(broker: ServiceBroker | null, cmd: OperatorCommand, values: string[]): Promise<unknown> {
  const { args } = commandArgs(cmd, values);
  if (cmd.local) return cmd.local(args);
  if (!broker) throw new Error(`${cmd.name} needs a node`);
  return broker.call(cmd.action, cmd.params(args));
}

/** The row counts of the main collections of a store summary, as text. */
function rowLine(rows: Record<string, number>): string {
  return ['merchants', 'payment_sessions', 'ledger_transfers', 'audit_events'].map((t) => `${rows[t] ?? 0} ${t}`).join(', ');
}
