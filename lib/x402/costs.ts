/**
 * What settling an x402 payment on chain costs, and who pays it: the fee policy (lib/treasury/fee-policy.ts)
 * makes an x402 settlement a **platform cost** (money arriving), so the network fee of the gas wallet's
 * settlement transaction (EIP-3009 `transferWithAuthorization`, or the fee of a Solana payment it co-signed as
 * fee payer) is booked through the one booking primitive (`fee:x402:<challenge id>`, sys:gas → sys:fees in the
 * chain's native coin). The merchant is credited the whole amount; what keeps a payment from costing more
 * than it brings is the per-rail minimum of a challenge (x402MinimumSubunits).
 */
import type { LedgerBatch } from '../ledger/index.ts';
import { toSubunits } from '../core/money.ts';
import { bookNetworkCost } from '../treasury/fee-booking.ts';
import type { Rail } from '../../config/rails.ts';

const NATIVE = { ethereum: 'ETH', solana: 'SOL' } as const;

export async function bookSettlementCost(
  b: LedgerBatch,
  c: { id: string; chain: 'ethereum' | 'solana'; network: string },
  fee: bigint,
  txHash: string,
): Promise<void> {
  await bookNetworkCost(b, {
    movement: 'x402_settlement',
    key: `x402:${c.id}`,
    asset: `${c.chain}:${c.network}:${NATIVE[c.chain]}`,
    fee,
    refs: { tx_hash: txHash },
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
