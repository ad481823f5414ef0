/**
 * The one booking primitive for network costs (fees burnt, token-account rent, gas parked at an address),
 * following ./fee-policy.ts. Every movement's final write calls `bookNetworkCost`; merchant-paid
 * movements reserve their quote first with `reserveFee`. Transfer ids (idempotency keys), per movement
 * key `<key>` (a payout id, an outbox row id, …):
 *
 *   feeres:<key>   pending wallet → sys:fees       the quote, reserved at acceptance (merchant-paid)
 *   fee:<key>      wallet | sys:gas | sys:gas@<address> → sys:fees   the network fee burnt
 *   rent:<key>     wallet | sys:gas → sys:rent     token-account rent the transaction locked
 *   fee:<key>:over sys:gas@<address> → sys:fees    a merchant-paid cost above quote and balance (rare)
 *   gas:<key>      sys:gas → sys:gas@<address>     an Ethereum top-up parked at a controlled address
 */
import { LedgerBatch, accountId, available, parkedGasAccount, walletAccount, type TransferRefs } from '../ledger/index.ts';
import { feePayer, trueUp, type Movement } from './fee-policy.ts';

export interface ReserveSpec {
  key: string;
  walletId: string;
  /** the chain's native asset (`ethereum:testnet:ETH`) */
  asset: string;
  amount: bigint;
  refs: TransferRefs;
}

/** reserves a merchant-paid quote (pending; fails with insufficient_funds when the wallet cannot) */
export async function reserveFee(b: LedgerBatch, r: ReserveSpec): Promise<void> {
  if (r.amount <= 0n) return;
  await b.transfer({
    id: `feeres:${r.key}`,
    kind: 'fee',
    asset: r.asset,
    amount: r.amount,
    pending: true,
    debit_account: walletAccount(r.walletId, r.asset),
    credit_account: accountId('sys:fees', r.asset),
    ...r.refs,
  });
}

export interface CostSpec {
  movement: Movement;
  key: string;
  asset: string;
  /** network fee burnt (native smallest units) */
  fee: bigint;
  /** token-account rent locked by the transaction */
  rent?: bigint;
  /** merchant-paid: the wallet charged (its address paid on chain) */
  walletId?: string;
  /** the address whose parked platform gas paid (platform-paid Ethereum moves from a topped-up address), or covers a merchant shortfall */
  address?: string;
  refs: TransferRefs;
}

export interface BookedCost {
  charged: bigint;
  platform: bigint;
}

/** Books a final transaction's network cost per the fee policy; returns who bore how much. */
export async function bookNetworkCost(b: LedgerBatch, c: CostSpec): Promise<BookedCost> {
  const rent = c.rent ?? 0n;
  if (feePayer(c.movement) === 'merchant') {
    if (!c.walletId) throw new Error(`${c.movement} ${c.key}: a merchant-paid cost needs the wallet`);
    return chargeWallet(b, c, c.walletId, rent);
  }
  // the platform: burnt from the gas parked at the address that paid, else from the gas wallet (fee payer)
  const source = c.address ? parkedGasAccount(c.address, c.asset) : accountId('sys:gas', c.asset);
  if (c.fee > 0n) await b.transfer(cost(`fee:${c.key}`, 'sys:fees', source, c, c.fee));
  if (rent > 0n) await b.transfer(cost(`rent:${c.key}`, 'sys:rent', accountId('sys:gas', c.asset), c, rent));
  return { charged: 0n, platform: c.fee + rent };
}

function cost(id: string, to: 'sys:fees' | 'sys:rent', from: string, c: CostSpec, amount: bigint) {
  return { id, kind: 'fee' as const, asset: c.asset, amount, debit_account: from, credit_account: accountId(to, c.asset), ...c.refs };
}

async function chargeWallet(b: LedgerBatch, c: CostSpec, walletId: string, rent: bigint): Promise<BookedCost> {
  const reservation = await b.transferDoc(`feeres:${c.key}`);
  const reserved = reservation?.status === 'pending' ? BigInt(reservation.amount) : 0n;
  if (reserved > 0n) await b.void(reservation!.id);
  const wallet = walletAccount(walletId, c.asset);
  const t = trueUp(reserved, c.fee + rent, available(await b.account(wallet)) - reserved);
  // rent first from the charge (it is never above the quote unless the account vanished), then the fee
  const rentCharged = rent < t.charged ? rent : t.charged;
  const feeCharged = t.charged - rentCharged;
  if (feeCharged > 0n) await b.transfer(cost(`fee:${c.key}`, 'sys:fees', wallet, c, feeCharged));
  if (rentCharged > 0n) await b.transfer(cost(`rent:${c.key}`, 'sys:rent', wallet, c, rentCharged));
  if (t.uncovered > 0n) {
    const from = c.address ? parkedGasAccount(c.address, c.asset) : accountId('sys:gas', c.asset);
    await b.transfer(cost(`fee:${c.key}:over`, 'sys:fees', from, c, t.uncovered));
  }
  return { charged: t.charged, platform: t.uncovered };
}

/** An Ethereum top-up confirmed: its value parked at `address` (the platform's), its own fee burnt from sys:gas. */
export async function bookParkedTopup(
  b: LedgerBatch,
  key: string,
  address: string,
  asset: string,
  value: bigint,
  fee: bigint,
  refs: TransferRefs,
): Promise<void> {
  if (value > 0n)
    await b.transfer({
      id: `gas:${key}`,
      kind: 'fee',
      asset,
      amount: value,
      debit_account: accountId('sys:gas', asset),
      credit_account: parkedGasAccount(address, asset),
      ...refs,
    });
  if (fee > 0n) await b.transfer(cost(`fee:${key}`, 'sys:fees', accountId('sys:gas', asset), { asset, refs } as CostSpec, fee));
}

/** platform gas already parked at `address` (netted against the next top-up there) */
export async function parkedGas(b: LedgerBatch, address: string, asset: string): Promise<bigint> {
  const a = await b.account(parkedGasAccount(address, asset));
  return BigInt(a.credits_posted) - BigInt(a.debits_posted);
}
