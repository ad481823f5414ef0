/**
 * What an outbox row means to the books: the amount and asset it moves, and which ledger accounts are the
 * platform's own money or a merchant wallet's on-chain balance (the movement check compares both).
 */
import type { ChainTxDoc } from '../../chains/broadcast/types.ts';
import { isWalletOwner, parseAccountId } from '../../ledger/index.ts';
import { NATIVE, normalAddress } from './effects.ts';

/** system owners outside the platform: the chain itself, payouts leaving, simulated money */
const OUTSIDE = new Set(['sys:chain', 'sys:payouts', 'sys:simulated']);
export const isPlatformAccount = (accountId: string): boolean => {
  const { owner } = parseAccountId(accountId);
  return owner.startsWith('sys:') && !OUTSIDE.has(owner);
};
export const walletOfOnChainAccount = (accountId: string): string | null => {
  const { owner } = parseAccountId(accountId);
  return isWalletOwner(owner) && !owner.includes('.') ? owner : null;
};

/** the amount and chain asset a row moves (null for an unknown call) */
export function intentAmount(row: Pick<ChainTxDoc, 'intent' | 'attempts' | 'tx_hash'>): { asset: string; value: bigint } | null {
  const i = row.intent;
  if (i.chain === 'ethereum') {
    if (i.kind === 'native') {
      const a = row.attempts.find((x) => x.hash === row.tx_hash) ?? row.attempts[0];
      return { asset: NATIVE, value: BigInt(a?.value ?? i.value) };
    }
    if (i.kind === 'erc20') return { asset: normalAddress('ethereum', i.token), value: BigInt(i.amount) };
    return null;
  }
  if (i.kind === 'native') return { asset: NATIVE, value: BigInt(i.lamports) };
  if (i.kind === 'spl') return { asset: i.mint, value: BigInt(i.amount) };
  return null;
}
