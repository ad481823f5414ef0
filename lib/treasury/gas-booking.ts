/**
 * Booking the gas a platform top-up puts at a wallet's own address (Ethereum), shared by on-chain payouts
 * and custody moves, so the wallet's ETH ledger always mirrors its address:
 * - top-up confirmed: `gas:<key>` sys:gas → wallet (the ETH it received), reserved as `feeres:<key>`
 *   (pending wallet → sys:fees) until the transaction it pays for is final, so no ETH payout spends it
 *   first; the top-up's own fee `fee:<key>:topup` sys:gas → sys:fees;
 * - the paid-for transaction final: the reservation released, its fee `fee:<key>` from the wallet (the
 *   top-up it received) and any shortfall after a gas-price bump `fee:<key>:platform` from sys:gas.
 */
import { LedgerBatch, accountId, available, walletAccount, type TransferRefs } from '../ledger/index.ts';

export async function bookTopup(
  b: LedgerBatch,
  key: string,
  walletId: string,
  asset: string,
  value: bigint,
  fee: bigint,
  refs: TransferRefs,
): Promise<void> {
  await b.transfer({
    id: `gas:${key}`,
    kind: 'fee',
    asset,
    amount: value,
    debit_account: accountId('sys:gas', asset),
    credit_account: walletAccount(walletId, asset),
    ...refs,
  });
  const { tx_hash: _hash, ...reserveRefs } = refs;
  if (value > 0n)
    await b.transfer({
      id: `feeres:${key}`,
      kind: 'fee',
      asset,
      amount: value,
      pending: true,
      debit_account: walletAccount(walletId, asset),
      credit_account: accountId('sys:fees', asset),
      ...reserveRefs,
    });
  if (fee > 0n)
    await b.transfer({
      id: `fee:${key}:topup`,
      kind: 'fee',
      asset,
      amount: fee,
      debit_account: accountId('sys:gas', asset),
      credit_account: accountId('sys:fees', asset),
      ...refs,
    });
}

/** releases `feeres:<key>` (when still pending) and books the fee paid from the wallet's address */
export async function bookWalletFee(
  b: LedgerBatch,
  key: string,
  walletId: string,
  asset: string,
  fee: bigint,
  refs: TransferRefs,
): Promise<void> {
  const reservation = await b.transferDoc(`feeres:${key}`);
  if (reservation?.status === 'pending') await b.void(reservation.id);
  if (fee <= 0n) return;
  const wallet = await b.account(walletAccount(walletId, asset));
  const have = available(wallet);
  const own = fee <= have ? fee : have > 0n ? have : 0n;
  if (own > 0n)
    await b.transfer({
      id: `fee:${key}`,
      kind: 'fee',
      asset,
      amount: own,
      debit_account: wallet.id,
      credit_account: accountId('sys:fees', asset),
      ...refs,
    });
  if (fee > own)
    await b.transfer({
      id: `fee:${key}:platform`,
      kind: 'fee',
      asset,
      amount: fee - own,
      debit_account: accountId('sys:gas', asset),
      credit_account: accountId('sys:fees', asset),
      ...refs,
    });
}
