/**
 * GET /v1/payment_sessions/{session_id}/diagnostics (facade): gathers what is known about one of the
 * merchant's sessions (the session, what the listeners recorded for its address, transfers on chain not
 * yet at depth, the listener's lease and cursor, its webhook deliveries) and lets lib/ops/diagnostics.ts
 * decide. Only the owning merchant; any other session is 404, as on GET.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { notFound } from '../lib/core/errors.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';
import type { DepositDoc } from '../lib/chains/deposit-inbox.ts';
import { CURSORS } from '../lib/chains/cursor.ts';
import { LEASE_COLLECTION, type LeaseDoc } from '../lib/chains/lease.ts';
import { ethProvider } from '../lib/chains/clients.ts';
import { transfersAboveCursor } from '../lib/chains/ethereum/unconfirmed.ts';
import { diagnose, type ListenerFacts, type UnconfirmedTransfer, type WebhookFacts } from '../lib/ops/diagnostics.ts';
import type { Doc } from '../lib/store/port.ts';

/** the chain read of a diagnostics request never holds it up for long */
const CHAIN_READ_MS = 5_000;

export function createDiagnosticsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;

  async function listenerFacts(s: PaymentSessionState): Promise<{ facts: ListenerFacts; cursorBlock: number | null }> {
    const net = config.chains[s.chain as 'ethereum' | 'solana']?.[s.network as 'testnet' | 'mainnet'];
    const lease = await store.get<LeaseDoc>(LEASE_COLLECTION, `${s.chain}:${s.network}`);
    const now = rt.now();
    const leaseHeld = lease !== null && Date.parse(lease.expires_at) > now.getTime();
    const cursorId = s.chain === 'ethereum' ? `ethereum:${s.network}` : `solana:${s.network}:${s.address}`;
    const cursor = await store.get<Doc & { block?: number; updated_at?: string }>(CURSORS, cursorId);
    return {
      facts: {
        configured: Boolean(net?.rpcUrl),
        leaseHeld,
        // Solana cursors move only when the address sees a transaction: the lease renewal says it is alive
        lastProgressAt: s.chain === 'ethereum' ? cursor?.updated_at || null : (lease?.renewed_at ?? null),
        behindBlocks: null,
      },
      cursorBlock: typeof cursor?.block === 'number' ? cursor.block : null,
    };
  }

  /** Ethereum transfers to the address above the listener's cursor (not yet deep enough to count). */
  async function shallowTransfers(
    s: PaymentSessionState,
    cursorBlock: number | null,
    log: { warn(...a: unknown[]): void },
  ): Promise<{ transfers: UnconfirmedTransfer[]; head: number | null }> {
    if (s.chain !== 'ethereum') return { transfers: [], head: null };
    const net = config.chains.ethereum[s.network as 'testnet' | 'mainnet'];
    if (!net?.rpcUrl) return { transfers: [], head: null };
    try {
      const provider = await ethProvider(net.rpcUrl, CHAIN_READ_MS);
      const read = async () => {
        const head = await provider.getBlockNumber();
        const from = cursorBlock ?? head - 64;
        const found = await transfersAboveCursor(provider, {
          address: s.address,
          usdcContract: net.usdcToken,
          cursorBlock: from,
          maxBlocks: 64,
        });
        return { head, found };
      };
      const { head, found } = await Promise.race([
        read(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('chain read timed out')), CHAIN_READ_MS).unref()),
      ]);
      return {
        head,
        transfers: found
          .filter((t) => t.confirmations < net.confirmations)
          .map((t) => ({
            tx_hash: t.tx_hash,
            token: t.token,
            amount_subunits: t.amount_subunits,
            confirmations: t.confirmations,
            block_time: t.block_time,
          })),
      };
    } catch (e) {
      // the RPC URL holds a provider key: log the failure's class only, never the URL
      log.warn(`diagnostics: ${s.chain} ${s.network} chain read failed (${(e as Error).name})`);
      return { transfers: [], head: null };
    }
  }

  return {
    name: 'diagnostics',
    actions: {
      session: {
        async handler(ctx: Context<{ params: { session_id: string } }>) {
          const caller = callingMerchant(ctx);
          const id = ctx.params.params?.session_id;
          const s = typeof id === 'string' ? await store.get<PaymentSessionState>('payment_sessions', id) : null;
          if (!s || s.merchant_id !== caller.merchant_id) throw notFound('payment session');
          const [recorded, events, listener] = await Promise.all([
            store.find<DepositDoc>('deposits', { session_id: s.id }),
            store.find<Doc & WebhookFacts>('webhook_events', { session_id: s.id, merchant_id: caller.merchant_id }, { sort: 'created_at' }),
            listenerFacts(s),
          ]);
          const { transfers, head } = await shallowTransfers(s, listener.cursorBlock, this.logger);
          const depth = s.chain === 'ethereum' ? (config.chains.ethereum[s.network as 'testnet' | 'mainnet']?.confirmations ?? null) : null;
          if (head !== null && listener.cursorBlock !== null && depth !== null) {
            listener.facts.behindBlocks = Math.max(0, head - depth + 1 - listener.cursorBlock);
          }
          const findings = diagnose({
            session: s,
            now: rt.now(),
            recorded: recorded.map((d) => ({
              tx_hash: d.tx_hash,
              network: d.network,
              token: d.token,
              amount_subunits: d.amount_subunits,
              status: d.status,
              orphan_reason: d.orphan_reason,
              detected_at: d.detected_at,
            })),
            unconfirmed: transfers,
            requiredConfirmations: depth,
            listener: listener.facts,
            webhooks: events.map((e) => ({
              event_type: e.event_type,
              status: e.status,
              attempts: e.attempts ?? [],
              next_attempt_at: e.next_attempt_at,
            })),
          });
          return { session_id: s.id, status: s.status, checked_at: rt.now().toISOString(), findings };
        },
      },
    },
  };
}
