/**
 * Who pays for settling an x402 payment on chain, in one place (issue 18's fee policy; until lib/treasury
 * holds the policy and its booking primitive, this follows the draft in docs/money-out.md): the network fee
 * of the gas wallet's settlement transaction (EIP-3009 `transferWithAuthorization`, or the fee of a Solana
 * payment it co-signed as fee payer) is a **platform cost**, booked `sys:gas` → `sys:fees` in the chain's
 * native coin, like a token sweep's. The merchant is credited the whole amount; what keeps a payment from
 * costing more than it brings is the per-rail minimum of a challenge (x402MinimumSubunits).
 */
import { LedgerBatch, accountId } from '../ledger/index.ts';
import { toSubunits } from '../core/money.ts';
import type { Rail } from '../../config/rails.ts';

const NATIVE = { ethereum: 'ETH', solana: 'SOL' } as const;

export async function bookSettlementCost(
  b: LedgerBatch,
  c: { id: string; chain: 'ethereum' | 'solana'; network: string },
  fee: bigint,
  txHash: string,
): Promise<void> {
  if (fee <= 0n) return;
  const asset = `${c.chain}:${c.network}:${NATIVE[c.chain]}`;
  await b.transfer({
    id: `fee:x402:${c.id}`,
    kind: 'fee',
    asset,
    amount: fee,
    tx_hash: txHash,
    debit_account: accountId('sys:gas', asset),
    credit_account: accountId('sys:fees', asset),
  });
}

/**
 * The smallest challenge on a rail, in smallest units: X402_MIN_AMOUNTS names it per rail
 * (`<chain>:<network>:<token>=<token units>`), never below the rail's min_amount.
 */
export function x402MinimumSubunits(rail: Rail, configured: Record<string, string>): bigint {
  const own = toSubunits(rail.min_amount, rail.decimals);
  const set = configured[`${rail.chain}:${rail.network}:${rail.token}`];
  const min = set === undefined ? 0n : toSubunits(set, rail.decimals);
  return min > own ? min : own;
}
