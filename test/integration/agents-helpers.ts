/** Agent-wallet fixtures through the public API: wallets, sandbox money in them, balances. */
import type { TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import type { ActorHost } from '../../actors/runtime.ts';
import type { AgentWalletMsg, AgentWalletReply, AgentWalletState } from '../../lib/agents/state.ts';
import { newId } from '../../lib/core/ids.ts';

export const RAIL = 'ethereum:testnet:USDC';

export interface WalletRef {
  id: string;
  address: string;
  chain: string;
  network: string;
  type: string;
}

async function ok<T = any>(t: TestNode, method: string, path: string, key: string, body?: unknown): Promise<T> {
  const r = await t.request(method, path, { key, body });
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${r.text}`);
  return r.body as T;
}

export async function createWallet(
  t: TestNode,
  m: RegisteredMerchant,
  type: 'agent' | 'merchant',
  chain = 'ethereum',
  network = 'testnet',
): Promise<WalletRef> {
  const w = await ok<WalletRef>(t, 'POST', '/v1/wallets', m.apiKey, { type, chain, network });
  return { id: w.id, address: w.address, chain, network, type };
}

/**
 * Puts sandbox (simulated) USDC into a wallet the way a merchant does: a sandbox session completed by
 * simulate settles into the merchant's default wallet, and a payout to the wallet's address moves it there.
 */
export async function fund(t: TestNode, m: RegisteredMerchant, w: WalletRef, subunits: bigint): Promise<void> {
  const session = await ok(t, 'POST', '/v1/payment_sessions', m.apiKey, {
    amount: Number(subunits) / 1e6,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: w.chain, token: 'USDC', network: w.network },
  });
  await ok(t, 'POST', `/v1/payment_sessions/${session.session_id}/simulate`, m.apiKey);
  const wallets = await ok<{ data: Array<WalletRef & { is_default: boolean }> }>(t, 'GET', '/v1/wallets?limit=100', m.apiKey);
  const source = wallets.data.find((x) => x.is_default && x.chain === w.chain && x.network === w.network)!;
  if (source.id === w.id) return;
  await ok(t, 'POST', '/v1/payouts', m.apiKey, {
    wallet_id: source.id,
    token: 'USDC',
    destination: w.address,
    amount_subunits: subunits.toString(),
  });
}

/** available USDC of a wallet (on-chain plus simulated), in smallest units */
export async function balanceOf(t: TestNode, m: RegisteredMerchant, walletId: string, token = 'USDC'): Promise<bigint> {
  const w = await ok<{ balances: Array<{ token: string; available_subunits: string }> }>(t, 'GET', `/v1/wallets/${walletId}`, m.apiKey);
  return BigInt(w.balances.find((b) => b.token === token)?.available_subunits ?? '0');
}

export const POLICY = {
  limits: {
    [RAIL]: {
      per_attempt_subunits: '5000000',
      approval_above_subunits: '3000000',
      windows: [{ duration: '24h', max_subunits: '10000000', max_count: 50 }],
    },
  },
  allowed_targets: [],
  denied_targets: [],
  allowed_api_domains: [],
  allow_mainnet: false,
  expires_at: null,
};

export function attemptBody(target: string, subunits: bigint, extra: Record<string, unknown> = {}) {
  return {
    target,
    amount: Number(subunits) / 1e6,
    amount_subunits: subunits.toString(),
    token_symbol: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    ...extra,
  };
}

/** the node's own host of agent-wallet actors (to send messages straight to it, as two holders would) */
export const walletActors = (t: TestNode) =>
  (
    t.node.broker.getLocalService('agent-wallet-actors') as unknown as {
      actors: ActorHost<AgentWalletState, AgentWalletMsg, AgentWalletReply>;
    }
  ).actors;

/**
 * An attempt message as the facade sends it to the wallet's actor, with the facts it would gather: to
 * one of our wallets (`targetWalletId`) or, with null, to an address on chain.
 */
export function attemptMessage(
  m: RegisteredMerchant,
  w: WalletRef,
  target: { address: string; walletId: string | null },
  subunits: bigint,
  reference: string | null = null,
): AgentWalletMsg {
  return {
    type: 'attempt',
    attempt_id: newId('sa'),
    payout_id: newId('po'),
    dry_run: false,
    input: {
      target: target.address,
      amount_subunits: subunits.toString(),
      decimals: 6,
      token_symbol: 'USDC',
      chain: w.chain,
      network: w.network,
      api_domain: null,
      reference,
      metadata: null,
    },
    ctx: {
      caller_merchant_id: m.id,
      merchant: { sandbox: true, kyc_verified: false },
      wallet: { id: w.id, merchant_id: m.id, type: 'agent', chain: w.chain, network: w.network, address: w.address },
      rail_enabled: true,
      target: target.walletId
        ? { kind: 'wallet', wallet_id: target.walletId, challenge_id: null }
        : { kind: 'chain', wallet_id: null, challenge_id: null },
    },
  };
}
