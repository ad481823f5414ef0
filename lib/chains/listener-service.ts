/**
 * What the two listener services share (services/ethereum-listener.service.ts,
 * services/solana-listener.service.ts): per configured network a scanner run under that network's lease
 * (lib/chains/runner.ts), one address book per chain, the deposit inbox, and the redelivery scanner
 * that runs on every node with the service (claims are atomic, so nodes never deliver the same claim).
 * Broker-free: the service passes `send` (session-actors.send) and its logger.
 */
import { randomBytes } from 'node:crypto';
import type { Runtime } from '../runtime/index.ts';
import { Lease } from './lease.ts';
import { RailRunner, type RunnerStatus } from './runner.ts';
import { DepositInbox, type DepositDoc, type SendToSession } from './deposit-inbox.ts';
import type { DueScanner } from '../core/due-scanner.ts';
import { SessionAddressBook } from './address-book.ts';
import type { ChainNetworkConfig } from '../../config/index.ts';
import { findRail } from '../../config/rails.ts';
import { toSubunits } from '../core/money.ts';

export type Logger = { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };

export interface Scanner<S> {
  readonly network: string;
  pass(stillHolding: () => Promise<boolean>): Promise<S>;
  /** called when this node (re)takes the lease */
  reset?(): void;
  close(): void;
}

export interface ListenerSetOptions<S> {
  chain: 'ethereum' | 'solana';
  rt: Runtime;
  nodeId: string;
  send: SendToSession;
  log: Logger;
  /** how long after expires_at a session address stays watched */
  keepAfterExpiryMs: number;
  makeScanner(network: 'testnet' | 'mainnet', cfg: ChainNetworkConfig, deps: { book: SessionAddressBook; inbox: DepositInbox }): Scanner<S>;
}

export class ListenerSet<S> {
  readonly chain: 'ethereum' | 'solana';
  readonly inbox: DepositInbox;
  readonly book: SessionAddressBook;
  readonly runners = new Map<string, RailRunner<S>>();
  private readonly scanners = new Map<string, Scanner<S>>();
  private readonly rt: Runtime;
  private readonly log: Logger;
  private readonly redelivery: DueScanner<DepositDoc>;

  constructor(o: ListenerSetOptions<S>) {
    this.chain = o.chain;
    this.rt = o.rt;
    this.log = o.log;
    const now = () => o.rt.now();
    // dust: less than a tenth of the rail's min_amount (lib/chains/deposit-inbox.ts)
    const dustBelow = (network: string, token: string) => {
      const rail = findRail(o.rt.config.rails, o.chain, network, token);
      return rail ? toSubunits(rail.min_amount, rail.decimals) / 10n : 0n;
    };
    this.inbox = new DepositInbox(o.rt.store, { send: o.send, now, log: o.log, dustBelow });
    this.redelivery = this.inbox.redeliveryScanner(o.chain, o.rt.config.listeners.pollIntervalMs);
    this.book = new SessionAddressBook(o.rt.store, o.chain, { keepAfterExpiryMs: o.keepAfterExpiryMs, now });
    // one owner id per service instance: two nodes in one process may share a Moleculer node id
    const owner = `${o.nodeId}:${randomBytes(4).toString('hex')}`;
    for (const network of ['testnet', 'mainnet'] as const) {
      const cfg = o.rt.config.chains[o.chain][network];
      if (!cfg.rpcUrl) continue;
      const scanner = o.makeScanner(network, cfg, { book: this.book, inbox: this.inbox });
      this.scanners.set(network, scanner);
      const lease = new Lease(o.rt.store, `${o.chain}:${network}`, owner, o.rt.config.listeners.leaseTtlMs, now);
      this.runners.set(
        network,
        new RailRunner<S>({
          name: `${o.chain}-listener ${network}`,
          lease,
          intervalMs: o.rt.config.listeners.pollIntervalMs,
          log: o.log,
          pass: (stillHolding) => scanner.pass(stillHolding),
          onAcquire: () => scanner.reset?.(),
        }),
      );
    }
  }

  get networks(): string[] {
    return [...this.runners.keys()];
  }

  /** lag per network for /metrics (lib/runtime/metrics.ts reads it at scrape time) */
  private readonly lag = () =>
    [...this.runners].map(([network, r]) => {
      const st = r.status();
      const stats = st.last_stats as { target?: unknown; cursor?: unknown } | null;
      const blocks =
        stats && typeof stats.target === 'number' && typeof stats.cursor === 'number' ? Math.max(0, stats.target - stats.cursor) : null;
      return { chain: this.chain, network, holding: st.holding, blocks, last_pass_at: st.last_pass_at };
    });

  start(): void {
    this.rt.metrics.listenerSources.add(this.lag);
    for (const r of this.runners.values()) r.start();
    if (this.runners.size > 0) this.redelivery.start();
  }

  /** Delivers every due deposit of the chain now; returns how many were claimed. */
  redeliverNow(): Promise<number> {
    return this.redelivery.scanOnce();
  }

  /** One pass on each network now (where this node holds the lease). */
  async pollNow(): Promise<Record<string, S | null>> {
    const out: Record<string, S | null> = {};
    for (const [network, r] of this.runners) out[network] = await r.runOnce();
    return out;
  }

  status(): Record<string, RunnerStatus<S>> {
    return Object.fromEntries([...this.runners].map(([n, r]) => [n, r.status()]));
  }

  async stop(): Promise<void> {
    this.rt.metrics.listenerSources.delete(this.lag);
    await Promise.all([...this.runners.values()].map((r) => r.stop()));
    await this.redelivery.stop();
    for (const s of this.scanners.values()) s.close();
  }
}
