/**
 * Solana refuses a SOL transfer that leaves the sender between zero and the rent-exempt minimum, or
 * brings less than that minimum to an account that does not exist yet. Checked before signing (payouts,
 * refunds, custody moves), so the refusal is said at once instead of after the transaction's blockhash expired.
 */
import { fromSubunits } from '../../core/money.ts';
import type { SolanaTxDriver } from './tx-driver.ts';

/** the reason the chain would refuse this SOL transfer, or null */
export async function solRentRefusal(
  driver: SolanaTxDriver,
  from: string,
  to: string,
  lamports: bigint,
  what: 'payout' | 'refund' | 'custody move' = 'payout',
  /** lamports the sender pays beside the amount (its own network fee, when it is the fee payer) */
  fee = 0n,
): Promise<string | null> {
  const min = await driver.rentExemptMinimum();
  const left = (await driver.lamports(from)) - lamports - fee;
  const hint =
    what === 'payout'
      ? 'pay out everything or leave at least that'
      : what === 'refund'
        ? 'fund the settlement wallet with more SOL and refund again'
        : 'waiting until the sending address holds more SOL';
  if (left > 0n && left < min)
    return `the ${what} would leave the wallet below Solana's rent-exempt minimum of ${fromSubunits(min, 9)} SOL: ${hint}`;
  if (lamports < min && (await driver.lamports(to)) === 0n)
    return `a new Solana account must receive at least ${fromSubunits(min, 9)} SOL (rent-exempt minimum)`;
  return null;
}

/** the reason the chain would refuse a fee payer spending `lamports` (fee and rent of an SPL transfer), or null */
export async function solFeePayerRefusal(driver: SolanaTxDriver, payer: string, lamports: bigint): Promise<string | null> {
  const min = await driver.rentExemptMinimum();
  const left = (await driver.lamports(payer)) - lamports;
  if (left < 0n) return `the wallet holds less SOL than the payout's network fee and rent (${fromSubunits(lamports, 9)} SOL)`;
  if (left > 0n && left < min)
    return `paying the network fee and rent would leave the wallet below Solana's rent-exempt minimum of ${fromSubunits(min, 9)} SOL: fund its SOL`;
  return null;
}
