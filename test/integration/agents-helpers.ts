/** Agent-wallet fixtures for tests: wallets and their money. */
import type { TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { LedgerBatch, accountId, walletAccount } from '../../lib/ledger/index.ts';
import { newId } from '../../lib/core/ids.ts';
import { Wallet } from 'ethers';
import { Keypair } from '@solana/web3.js';

export const RAIL = 'ethereum:testnet:USDC';

export interface WalletRef { id: string; address: string; chain: string; network: string; type: string }

/** A wallet of the merchant (TEMPORARY: written to the store until POST /v1/wallets lands on main). */
export async function createWallet(t: TestNode, m: RegisteredMerchant, type: 'agent' | 'merchant', chain = 'ethereum', network = 'testnet'): Promise<WalletRef> {
  const address = chain === 'ethereum' ? Wallet.createRandom().address : Keypair.generate().publicKey.toBase58();
  const isDefault = type === 'merchant' && !(await t.node.rt.store.get('wallets', '') ) && (await t.node.rt.store.count('wallets', { merchant_id: m.id, chain, network, is_default: true })) === 0;
  const doc = {
    id: newId('wal'), merchant_id: m.id, type, name: null, chain, network, address, derivation_index: Math.floor(Math.random() * 1e9),
    is_default: isDefault, ...(isDefault ? { default_key: `${m.id}:${chain}:${network}` } : {}), created_at: new Date().toISOString(),
  };
  await t.node.rt.store.write([{ op: 'insert', coll: 'wallets', doc }]);
  return { id: doc.id, address, chain, network, type };
}

/** Money in a wallet (TEMPORARY: a simulated-deposit ledger transfer until the wallets API can fund one). */
export async function fund(t: TestNode, walletId: string, amount: bigint, asset = RAIL, simulated = false): Promise<void> {
  const b = new LedgerBatch(t.node.rt.store);
  await b.transfer({ id: newId('evt'), kind: 'deposit', asset, amount, debit_account: accountId(simulated ? 'sys:simulated' : 'sys:chain', asset), credit_account: walletAccount(walletId, asset, simulated) });
  await t.node.rt.store.write(b.ops());
}

export async function balanceOf(t: TestNode, walletId: string, asset = RAIL, simulated = false): Promise<{ available: bigint; pending_debits: bigint }> {
  const a = await t.node.rt.store.get<{ id: string; credits_posted: string; debits_posted: string; debits_pending: string }>('ledger_accounts', walletAccount(walletId, asset, simulated));
  if (!a) return { available: 0n, pending_debits: 0n };
  return { available: BigInt(a.credits_posted) - BigInt(a.debits_posted) - BigInt(a.debits_pending), pending_debits: BigInt(a.debits_pending) };
}

export const POLICY = {
  limits: { [RAIL]: { per_attempt_subunits: '5000000', approval_above_subunits: '3000000', windows: [{ duration: '24h', max_subunits: '10000000', max_count: 50 }] } },
  allowed_targets: [], denied_targets: [], allowed_api_domains: [], allow_mainnet: false, expires_at: null,
};

export function attemptBody(target: string, subunits: bigint, extra: Record<string, unknown> = {}) {
  return { target, amount: Number(subunits) / 1e6, amount_subunits: subunits.toString(), token_symbol: 'USDC', chain: 'ethereum', network: 'testnet', ...extra };
}
